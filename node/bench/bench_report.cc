#include "node/bench/bench_report.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace charybdis::node {

namespace {

constexpr char kEtcd[] = "etcd";

const PhaseRun* Find(const std::vector<PhaseRun>& runs, const PhaseRun& like, const std::string& system,
                     const std::string& measure) {
  for (const PhaseRun& run : runs) {
    if (run.phase == like.phase && run.mode == like.mode && run.system == system && run.measure == measure) {
      return &run;
    }
  }
  return nullptr;
}

double FailedFraction(const LoadResult& result) {
  return result.requests == 0 ? 0 : 1.0 - static_cast<double>(result.applied) / static_cast<double>(result.requests);
}

// The goals (docs/benchmarks.md), for the default durability mode.
std::optional<double> GoalOf(const PhaseRun& run, const std::string& figure) {
  // Issue 10: latency through CQL within 10% of our gRPC API.
  if (run.system == kCqlSystem) return figure == "p50" ? std::optional<double>(1.1) : std::nullopt;
  if (run.system != "charybdis" || run.mode.rfind("group", 0) != 0) return std::nullopt;
  if (figure != "p50" && figure != "throughput") return std::nullopt;
  if (run.measure == "QUORUM put") return 0.4;
  if (run.measure == "get") return 0.5;
  if (run.measure == "LWT IF NOT EXISTS") return 0.6;
  if (run.phase == "b") return 2.0;
  if (run.measure == "contention 16 clients") return 2.0;
  return std::nullopt;
}

Comparison Latency(const PhaseRun& ours, const PhaseRun& theirs, const std::string& figure) {
  Comparison comparison;
  comparison.title = absl::StrCat(ours.phase, ". ", ours.measure, " ", figure, " (", ours.system, ", ", ours.mode, ")");
  comparison.unit = "us";
  const bool p50 = figure == "p50";
  comparison.ours = static_cast<double>(p50 ? ours.result.p50_us() : ours.result.p99_us());
  comparison.theirs = static_cast<double>(p50 ? theirs.result.p50_us() : theirs.result.p99_us());
  comparison.theirs_name = theirs.system;
  comparison.goal = GoalOf(ours, figure);
  return comparison;
}

Comparison Throughput(const PhaseRun& ours, const PhaseRun& theirs) {
  Comparison comparison;
  comparison.lower_is_better = false;
  comparison.theirs_name = theirs.system;
  comparison.goal = GoalOf(ours, "throughput");
  const std::string who = absl::StrCat(" (", ours.system, ", ", ours.mode, ")");
  if (ours.phase == "c") {
    comparison.title = absl::StrFormat("c. %s applied/s%s, failed %.2f vs %.2f", ours.measure, who,
                                       FailedFraction(ours.result), FailedFraction(theirs.result));
    comparison.unit = "applied/s";
    comparison.ours = ours.result.applied_per_second();
    comparison.theirs = theirs.result.applied_per_second();
  } else {
    comparison.title = absl::StrCat(ours.phase, ". ", ours.measure, " rows/s", who);
    comparison.unit = "rows/s";
    comparison.ours = ours.result.ok_per_second() * ours.rows_per_request;
    comparison.theirs = theirs.result.ok_per_second() * theirs.rows_per_request;
  }
  return comparison;
}

// Phase q's levels: each level's p50 beside ONE's, as ../shared/seeds/000
// tabulates them (ALL was 1.08x ONE there).
std::optional<Comparison> LevelComparison(const std::vector<PhaseRun>& runs, const PhaseRun& ours) {
  const std::string prefix = absl::StrCat(kCqlSystem, " ");  // then the level
  const PhaseRun* theirs = Find(runs, ours, prefix + "ONE", ours.measure);
  if (ours.system == prefix + "ONE" || ours.system.rfind(prefix, 0) != 0 || theirs == nullptr ||
      ours.result.ok == 0 || theirs->result.ok == 0) {
    return std::nullopt;
  }
  Comparison comparison = Latency(ours, *theirs, "p50");
  comparison.title = absl::StrCat("q. CQL ", ours.measure, " p50 at ", ours.system.substr(prefix.size()),
                                  " / at ONE (", ours.mode, ")");
  return comparison;
}

}  // namespace

std::vector<Comparison> Compare(const std::vector<PhaseRun>& runs) {
  std::vector<Comparison> comparisons;
  for (const PhaseRun& ours : runs) {
    if (ours.system == kEtcd) continue;
    if (ours.phase == "q") {
      if (auto level = LevelComparison(runs, ours)) comparisons.push_back(*level);
      continue;
    }
    const bool cql = ours.system == kCqlSystem;
    const PhaseRun* theirs = Find(runs, ours, cql ? "charybdis" : kEtcd, ours.measure);
    if (theirs == nullptr) continue;
    // Latencies only where both answered something (else there are none).
    const bool latencies = ours.result.ok > 0 && theirs->result.ok > 0;
    if (ours.phase == "a" && latencies) {
      comparisons.push_back(Latency(ours, *theirs, "p50"));
      comparisons.push_back(Latency(ours, *theirs, "p99"));
    } else if (ours.phase != "a") {
      comparisons.push_back(Throughput(ours, *theirs));
      if (ours.phase == "d" && latencies) comparisons.push_back(Latency(ours, *theirs, "p99"));
    }
    const PhaseRun* put = Find(runs, ours, ours.system, "QUORUM put");
    if (ours.measure == "LWT IF NOT EXISTS" && put != nullptr) {
      Comparison own = Latency(ours, *put, "p50");
      own.title = absl::StrCat("a. LWT p50 / our own QUORUM put p50 (", ours.system, ", ", ours.mode, ")");
      own.theirs_name = absl::StrCat(ours.system, " put");
      own.goal = GoalOf(ours, "p50") && !cql ? std::optional<double>(2.0) : std::nullopt;
      comparisons.push_back(own);
    }
  }
  return comparisons;
}

std::vector<Comparison> FloorComparisons(const MachineFloor& floor, const std::vector<PhaseRun>& runs) {
  const std::string how =
      absl::StrFormat("loopback round trip %d us, fdatasync %d us with %d at once", floor.loopback_round_trip_us,
                      floor.fdatasync_us, floor.sync_writers);
  const std::vector<std::pair<std::string, int64_t>> floors = {{"QUORUM put", floor.quorum_put_us()},
                                                               {"LWT IF NOT EXISTS", floor.lwt_us()}};
  std::vector<Comparison> comparisons;
  for (const auto& [measure, floor_us] : floors) {
    for (const PhaseRun& run : runs) {
      if (run.phase != "a" || run.mode != "group, RF=3" || run.system != kEtcd || run.measure != measure) continue;
      if (run.result.ok == 0) continue;
      Comparison comparison;
      comparison.title = absl::StrCat("a. ", measure, " floor (this machine: ", how, ")");
      comparison.unit = "us";
      comparison.ours = static_cast<double>(floor_us);
      comparison.theirs = static_cast<double>(run.result.p50_us());
      comparison.theirs_name = "etcd p50";
      comparisons.push_back(comparison);
    }
  }
  return comparisons;
}

std::optional<Comparison> MemoryComparison(const std::vector<MemorySample>& samples, const std::string& mode) {
  if (samples.size() < 2) return std::nullopt;
  const MemorySample& halfway = samples[samples.size() / 2 - 1];
  const MemorySample& end = samples.back();
  Comparison comparison;
  comparison.title = absl::StrCat("m. resident memory after ", end.lwts, " LWTs / after ", halfway.lwts,
                                  " (charybdis, ", mode, ")");
  comparison.unit = "MiB";
  comparison.ours = static_cast<double>(end.resident_bytes) / (1 << 20);
  comparison.theirs = static_cast<double>(halfway.resident_bytes) / (1 << 20);
  comparison.theirs_name = "charybdis halfway";
  comparison.goal = kMemoryGrowthGoal;
  return comparison;
}

std::string ComparisonTable(const std::vector<Comparison>& comparisons) {
  std::string table = absl::StrFormat("%-84s %15s %14s %7s %8s\n", "measure", "ours", "theirs", "ratio", "goal");
  for (const Comparison& c : comparisons) {
    std::string goal = "";
    if (c.goal) goal = absl::StrFormat("%s%g %s", c.lower_is_better ? "<=" : ">=", *c.goal, c.met() ? "met" : "MISSED");
    const bool plain = c.unit == "us" || c.unit == "MiB" || c.unit == "MB/s" || c.unit == "B" || c.unit == "s";
    const std::string unit = plain ? c.unit : "/s";
    // Seconds of a short run, and ratios far below 1, keep their digits.
    const std::string values = c.unit == "s" ? absl::StrFormat("%11.2f %-3s %10.2f %-3s", c.ours, unit, c.theirs, unit)
                                             : absl::StrFormat("%11.0f %-3s %10.0f %-3s", c.ours, unit, c.theirs, unit);
    const std::string ratio = c.ratio() < 0.01 ? absl::StrFormat("%7.4f", c.ratio()) : absl::StrFormat("%7.2f", c.ratio());
    absl::StrAppend(&table, absl::StrFormat("%-84s ", c.title), values, " ", ratio, " ", goal, "\n");
  }
  return table;
}

nlohmann::json ReportJson(const std::vector<PhaseRun>& runs, const std::vector<Comparison>& comparisons) {
  nlohmann::json report;
  report["runs"] = nlohmann::json::array();
  for (const PhaseRun& run : runs) {
    const LoadResult& r = run.result;
    report["runs"].push_back({{"phase", run.phase}, {"measure", run.measure}, {"mode", run.mode},
                              {"system", run.system}, {"rows_per_request", run.rows_per_request},
                              {"requests", r.requests}, {"ok", r.ok}, {"applied", r.applied},
                              {"errors", r.errors}, {"seconds", r.seconds}, {"p50_us", r.p50_us()},
                              {"p99_us", r.p99_us()}, {"ok_per_second", r.ok_per_second()},
                              {"applied_per_second", r.applied_per_second()}});
  }
  report["comparisons"] = nlohmann::json::array();
  for (const Comparison& c : comparisons) {
    nlohmann::json line = {{"title", c.title}, {"unit", c.unit}, {"ours", c.ours}, {"theirs", c.theirs},
                           {"theirs_name", c.theirs_name}, {"ratio", c.ratio()},
                           {"lower_is_better", c.lower_is_better}};
    if (c.goal) {
      line["goal"] = *c.goal;
      line["met"] = c.met();
    }
    report["comparisons"].push_back(line);
  }
  return report;
}

std::string RatioChartSvg(const std::vector<Comparison>& comparisons) {
  // Bars from parity (1x) on a log scale over [1/32, 32], drawn so that
  // right is always better for us: a latency ratio is drawn inverted.
  constexpr int kLabelWidth = 560, kBarWidth = 500, kRowHeight = 22, kTop = 40;
  const int height = kTop + kRowHeight * static_cast<int>(comparisons.size()) + 30;
  auto x_of = [&](double advantage) {
    const double clamped = std::clamp(advantage, 1.0 / 32, 32.0);
    return kLabelWidth + kBarWidth / 2 + std::log2(clamped) / 5.0 * (kBarWidth / 2);
  };
  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
      "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
      "<text x=\"10\" y=\"20\" font-size=\"14\">Charybdis vs etcd, same machine, same run: how many times "
      "better (right) or worse (left)</text>\n",
      kLabelWidth + kBarWidth + 60, height);
  for (double tick : {1.0 / 16, 1.0 / 4, 1.0, 4.0, 16.0}) {
    absl::StrAppend(&svg, absl::StrFormat("<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ccc\"/>"
                                          "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%gx</text>\n",
                                          x_of(tick), kTop - 5, x_of(tick), height - 25, x_of(tick), height - 10, tick));
  }
  for (size_t i = 0; i < comparisons.size(); i++) {
    const Comparison& c = comparisons[i];
    const double ratio = c.ratio() > 0 ? c.ratio() : 1.0 / 32;
    const double advantage = c.lower_is_better ? 1.0 / ratio : ratio;
    const int y = kTop + kRowHeight * static_cast<int>(i);
    const double from = std::min(x_of(1), x_of(advantage)), to = std::max(x_of(1), x_of(advantage));
    absl::StrAppend(&svg, absl::StrFormat("<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", kLabelWidth - 8,
                                          y + 15, c.title));
    absl::StrAppend(&svg, absl::StrFormat("<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"16\" fill=\"%s\"/>\n", from,
                                          y + 3, std::max(to - from, 1.0), advantage >= 1 ? "#3a7" : "#c54"));
    if (c.goal) {
      const double goal_advantage = c.lower_is_better ? 1.0 / *c.goal : *c.goal;
      absl::StrAppend(&svg, absl::StrFormat("<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"black\" "
                                            "stroke-width=\"2\"/>\n",
                                            x_of(goal_advantage), y + 1, x_of(goal_advantage), y + 21));
    }
  }
  return svg + "</svg>\n";
}

}  // namespace charybdis::node
