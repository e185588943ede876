// `./charybdis sim`: runs scenarios at seeds, checks determinism, writes
// traces, histories and reports. The runner alone reads the wall clock, to
// time itself; everything inside a simulation runs on simulated time.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/coverage.h"
#include "sim/exit_codes.h"
#include "sim/json_text.h"
#include "sim/merge.h"
#include "sim/history_check.h"
#include "core/workload/history_json.h"
#include "sim/options.h"
#include "sim/scenario_checks.h"
#include "sim/crash_point_sweep.h"
#include "sim/shrink.h"
#include "sim/topology.h"
#include "sim/sweep.h"

namespace charybdis::sim {
namespace {

int CheckHistoryFile(const Options& options, const std::vector<LoadedScenario>& scenarios) {
  if (options.scenarios_given && scenarios.size() != 1) {
    std::cerr << "charybdis sim: --check_history takes one --scenario (or none: linearizability alone)\n";
    return kExitBadInput;
  }
  // Without a scenario: a Jepsen-style register history, nothing else known.
  const LoadedScenario* scenario = options.scenarios_given ? &scenarios[0] : nullptr;
  std::string table;
  std::string datacenter;
  if (scenario != nullptr) {
    for (const auto& workload : scenario->spec.workload()) {
      if (workload.has_kv() && table.empty()) table = workload.kv().table();
    }
    datacenter = scenario->topology.datacenters.at(0);
  }
  std::ifstream in(options.check_history);
  if (!in) {
    std::cerr << "charybdis sim: --check_history: cannot read " << options.check_history << "\n";
    return kExitBadInput;
  }
  absl::StatusOr<History> history = ReadHistoryJson(in, table, datacenter);
  if (!history.ok()) {
    std::cerr << options.check_history << ": " << history.status().message() << "\n";
    return kExitBadInput;
  }
  const std::vector<CheckResult> results = scenario != nullptr
                                               ? CheckRecordedHistory(*scenario, *history)
                                               : std::vector<CheckResult>{CheckLinearizableHistory(*history)};
  if (results.empty()) {
    std::cerr << "charybdis sim: the scenario asks for no history check (" << HistoryCheckNames()
              << ")\n";
    return kExitBadInput;
  }
  bool passed = true;
  for (const CheckResult& check : results) {
    std::cout << "check " << check.name << ": " << (check.passed ? "passed" : "FAILED") << " ("
              << check.detail << ")\n";
    passed = passed && check.passed;
  }
  return passed ? kExitPassed : kExitCheckFailed;
}

int ShrinkSeed(const Options& options, const LoadedScenario& scenario) {
  const uint64_t seed = options.first_seed;
  absl::StatusOr<ShrinkResult> shrunk = Shrink(scenario, seed, options.shrink_runs, std::cerr);
  if (!shrunk.ok()) {
    std::cerr << "charybdis sim: --shrink: " << shrunk.status().message() << "\n";
    return kExitBadInput;
  }
  const std::string name = scenario.spec.name().empty() ? "scenario" : scenario.spec.name();
  const std::string out = !options.shrink_out.empty()
                              ? options.shrink_out
                              : absl::StrCat(name, "-seed", seed, "-shrunk.textproto");
  std::ofstream file(out, std::ios::trunc);
  file << ShrunkScenarioText(*shrunk, scenario.path, out, seed);
  if (!file) {
    std::cerr << "charybdis sim: --shrink_out: cannot write " << out << "\n";
    return kExitBadInput;
  }
  const double percent = 100.0 * static_cast<double>(shrunk->events_after) /
                         static_cast<double>(std::max<uint64_t>(shrunk->events_before, 1));
  std::cout << "shrunk " << scenario.path << " seed " << seed << " in " << shrunk->runs
            << " runs: events " << shrunk->events_before << " -> " << shrunk->events_after << " ("
            << absl::StrFormat("%.1f", percent) << "%), faults " << shrunk->faults_before << " -> "
            << shrunk->faults_after
            << (shrunk->faults_scripted ? ""
                                        : " scripted (the faults that happened, replayed as a "
                                          "script, passed: random_faults stay, cut kind by kind)")
            << "\nwrote " << out << "\nreplay: ./charybdis sim --scenario=" << out
            << " --seed=" << seed << "\n";
  return kExitPassed;
}

// Prints every run, writes the report, says what a sweep covered and which
// seeds failed with their replay commands; the worst exit code.
int ReportRuns(const Options& options, const std::vector<LoadedScenario>& scenarios,
               const std::vector<RunRecord>& records, uint64_t total) {
  const bool want_report = !options.report.empty();
  int exit_code = kExitPassed;
  nlohmann::json reports = nlohmann::json::array();
  for (const RunRecord& record : records) {
    std::cout << record.summary_line << "\n";
    if (total == 1) std::cout << record.summary;
    exit_code = WorseExitCode(exit_code, record.exit_code);
    if (want_report) reports.push_back(record.report);
  }
  if (want_report) {
    std::ofstream out(options.report);
    out << JsonText(total == 1 ? reports[0] : reports, 2) << "\n";
    if (!out) {
      std::cerr << "charybdis sim: --report: cannot write " << options.report << "\n";
      return kExitBadInput;
    }
  }
  // A sweep says what it covered; a single run's summary has its report.
  if (options.last_seed > options.first_seed &&
      !ReportCoverage(scenarios, records, options.first_seed, options.last_seed, std::cout)) {
    exit_code = WorseExitCode(exit_code, kExitCheckFailed);
  }
  size_t failures = 0;
  for (const RunRecord& record : records) failures += record.exit_code != 0;
  if (failures > 0) {
    std::cout << failures << " of " << total << " runs failed:\n";
    for (const RunRecord& record : records) {
      if (record.exit_code == 0) continue;
      const std::string& path = scenarios[record.scenario].path;
      std::cout << "  " << path << " seed " << record.seed << ": " << record.why
                << "\n    replay: ./charybdis sim --scenario=" << path << " --seed=" << record.seed
                << (options.profile.empty() ? "" : " --profile=" + options.profile) << "\n";
    }
  } else if (total > 1) {
    std::cout << "all " << total << " runs passed\n";
  }
  return exit_code;
}

int RunSeeds(const Options& options, const std::vector<LoadedScenario>& scenarios) {
  const uint64_t seeds = options.last_seed - options.first_seed + 1;
  // The seeds of this slice (all of them without --shard).
  const uint64_t slice_seeds =
      seeds / options.shard_count + (options.shard_index < seeds % options.shard_count ? 1 : 0);
  const uint64_t total = slice_seeds * scenarios.size();
  if (total == 0) {
    std::cerr << "charybdis sim: --shard " << options.shard_index + 1 << "/" << options.shard_count
              << " holds no seed of " << options.first_seed << "-" << options.last_seed << "\n";
    return kExitBadInput;
  }
  if (!options.history_out.empty() && total != 1) {
    std::cerr << "charybdis sim: --history_out takes one run: one scenario and one seed\n";
    return kExitBadInput;
  }

  SweepOptions sweep;
  sweep.check_determinism = options.check_determinism;
  sweep.want_report = !options.report.empty();
  sweep.jobs = options.jobs;
  sweep.shard_index = options.shard_index;
  sweep.shard_count = options.shard_count;
  if (!options.trace_out.empty()) {
    sweep.trace = std::fopen(options.trace_out.c_str(), "w");
    if (sweep.trace == nullptr) {
      std::cerr << "charybdis sim: --trace_out: cannot write " << options.trace_out << "\n";
      return kExitBadInput;
    }
  }
  std::ofstream history;
  if (!options.history_out.empty()) {
    history.open(options.history_out, std::ios::trunc);
    if (!history) {
      std::cerr << "charybdis sim: --history_out: cannot write " << options.history_out << "\n";
      return kExitBadInput;
    }
    sweep.history = &history;
  }

  const bool progress_to_terminal = isatty(STDERR_FILENO);
  const auto start = std::chrono::steady_clock::now();
  const std::vector<RunRecord> records = Sweep(
      scenarios, options.first_seed, options.last_seed, sweep, [&](size_t done, size_t failed) {
        if (total <= 1 || !(progress_to_terminal || done % 50 == 0 || done == total)) return;
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - start)
                            .count();
        std::cerr << (progress_to_terminal ? "\r" : "") << "[" << done << "/" << total << "] "
                  << failed << " failed, " << ms << " ms"
                  << (progress_to_terminal && done < total ? "" : "\n") << std::flush;
      });
  if (sweep.trace != nullptr) std::fclose(sweep.trace);

  return ReportRuns(options, scenarios, records, total);
}

int Main(const std::vector<std::string>& args) {
  absl::StatusOr<Options> parsed = ParseOptions(args);
  if (!parsed.ok()) {
    std::cerr << "charybdis sim: " << parsed.status().message() << "\n";
    return kExitBadInput;
  }
  const Options& options = *parsed;
  if (options.help) {
    std::cout << kUsage;
    return kExitPassed;
  }
  if (!options.merge.empty()) return MergeReports(options.merge, options.report, std::cout, std::cerr);
  std::optional<scenario::Scenario> profile;
  if (!options.profile.empty()) {
    absl::StatusOr<scenario::Scenario> loaded = LoadProfile(options.profile);
    if (!loaded.ok()) {
      std::cerr << loaded.status().message() << "\n";
      return kExitBadInput;
    }
    profile = *loaded;
  }
  std::vector<LoadedScenario> scenarios;
  for (const std::string& path : options.scenarios) {
    absl::StatusOr<LoadedScenario> loaded = LoadScenario(path);
    if (!loaded.ok()) {
      std::cerr << loaded.status().message() << "\n";
      return kExitBadInput;
    }
    if (profile) ApplyProfile(*profile, loaded->spec);
    scenarios.push_back(std::move(*loaded));
  }
  if (!options.check_history.empty()) return CheckHistoryFile(options, scenarios);
  if (options.shrink) return ShrinkSeed(options, scenarios[0]);
  if (options.every_crash_point > 0) {
    const size_t nodes = Topology::From(scenarios[0].spec.topology()).nodes.size();
    if (options.every_crash_point > nodes) {
      std::cerr << "charybdis sim: --every_crash_point: " << scenarios[0].path << " has " << nodes << " nodes\n";
      return kExitBadInput;
    }
    return RunEveryCrashPoint(scenarios[0], options.first_seed, options.every_crash_point,
                              options.crash_restart_ms, std::cout);
  }
  return RunSeeds(options, scenarios);
}

}  // namespace
}  // namespace charybdis::sim

int main(int argc, char** argv) {
  return charybdis::sim::Main(std::vector<std::string>(argv + 1, argv + argc));
}
