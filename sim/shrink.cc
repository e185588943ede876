#include "sim/shrink.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/env/assert.h"
#include "core/workload/fault_kinds.h"
#include "google/protobuf/text_format.h"
#include "sim/child_pipe.h"
#include "sim/run.h"

namespace charybdis::sim {

namespace {

using Getter = std::function<uint64_t(const scenario::Scenario&)>;
using Setter = std::function<void(scenario::Scenario&, uint64_t)>;

// What a candidate run did, as far as shrinking cares.
struct Verdict {
  uint64_t events = 0;
  // The checks it failed; "unfinished" when it only ran out of time,
  // "crashed" when it died (an assertion). A check with nothing to check
  // is a different failure from a violation.
  std::set<std::string> failed;
  scenario::FaultSchedule faults_happened;
};

Verdict VerdictOf(const RunResult& result) {
  Verdict verdict;
  verdict.events = result.events;
  verdict.faults_happened = result.faults_happened;
  for (const CheckResult& check : result.checks) {
    if (!check.passed) verdict.failed.insert(check.name + (check.nothing_checked ? " (nothing to check)" : ""));
  }
  if (verdict.failed.empty() && result.outcome == Outcome::kLiveness) verdict.failed.insert("unfinished");
  return verdict;
}

// Runs the seed in a child process, so that a run that trips an assertion
// is a verdict ("crashed") rather than the end of the shrinker. The child
// traces to a pipe, one line per event, so that even a crashed run has an
// event count.
Verdict RunIsolated(const LoadedScenario& scenario, uint64_t seed) {
  int fds[2], trace_fds[2];
  CHARYBDIS_ASSERT(pipe(fds) == 0);
  CHARYBDIS_ASSERT(pipe(trace_fds) == 0);
  std::fflush(nullptr);
  const pid_t pid = fork();
  CHARYBDIS_ASSERT(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    close(trace_fds[0]);
    std::FILE* trace = fdopen(trace_fds[1], "w");
    std::setvbuf(trace, nullptr, _IOLBF, 0);  // an abort loses no line
    const Verdict verdict = VerdictOf(RunScenario(scenario, seed, trace));
    std::fclose(trace);
    std::string out = absl::StrJoin(verdict.failed, "\n");
    absl::StrAppend(&out, "\n\n", verdict.faults_happened.SerializeAsString());
    WriteAllOrExit(fds[1], out);
    _exit(0);
  }
  close(fds[1]);
  close(trace_fds[1]);
  Verdict verdict;
  char buffer[65536];
  for (ssize_t n; (n = read(trace_fds[0], buffer, sizeof buffer)) > 0;) {
    verdict.events += static_cast<uint64_t>(std::count(buffer, buffer + n, '\n'));
  }
  close(trace_fds[0]);
  std::string in;
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) > 0;) in.append(buffer, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    verdict.failed.insert("crashed");
    return verdict;
  }
  // The failed checks, one a line, an empty line, the faults that happened.
  const size_t names_end = in.find("\n\n");
  CHARYBDIS_ASSERT(names_end != std::string::npos);
  for (absl::string_view name : absl::StrSplit(in.substr(0, names_end), '\n', absl::SkipEmpty())) {
    verdict.failed.insert(std::string(name));
  }
  CHARYBDIS_ASSERT(verdict.faults_happened.ParseFromString(in.substr(names_end + 2)));
  return verdict;
}

uint32_t NodeCount(const scenario::Scenario& spec) {
  uint32_t nodes = 0;
  for (const auto& datacenter : spec.topology().datacenter()) {
    for (const auto& rack : datacenter.rack()) nodes += rack.nodes();
  }
  return nodes;
}

// Takes the highest-numbered node out of the topology; false when the
// last rack of the last datacenter cannot lose one.
bool RemoveLastNode(scenario::Scenario& spec) {
  auto& datacenters = *spec.mutable_topology()->mutable_datacenter();
  if (datacenters.empty()) return false;
  auto& racks = *datacenters.rbegin()->mutable_rack();
  if (racks.empty()) return false;
  if (racks.rbegin()->nodes() > 1) {
    racks.rbegin()->set_nodes(racks.rbegin()->nodes() - 1);
  } else if (racks.size() > 1) {
    racks.RemoveLast();
  } else {
    return false;
  }
  return true;
}

// Faults that name `node` go; partitions lose it from their sides.
void ForgetNode(scenario::Scenario& spec, uint32_t node) {
  scenario::FaultSchedule kept;
  for (scenario::FaultAction action : spec.faults().action()) {
    const uint32_t named = action.crash().node() | action.restart().node() | action.clog().node() |
                           action.pause().node() | action.disk().node() |
                           action.clock_skew().node() | action.crash_point().node();
    if (named == node) continue;
    if (action.has_partition()) {
      auto drop = [node](google::protobuf::RepeatedField<uint32_t>& side) {
        side.erase(std::remove(side.begin(), side.end(), node), side.end());
      };
      const bool had_side_b = !action.partition().side_b().empty();
      drop(*action.mutable_partition()->mutable_side_a());
      drop(*action.mutable_partition()->mutable_side_b());
      // An empty side_b means every other node: a wider partition.
      if (action.partition().side_a().empty() || (had_side_b && action.partition().side_b().empty())) {
        continue;
      }
    }
    *kept.add_action() = action;
  }
  *spec.mutable_faults() = kept;
}

class Shrinker {
 public:
  Shrinker(const LoadedScenario& original, uint64_t seed, size_t max_runs, std::ostream& log)
      : original_(original), seed_(seed), max_runs_(max_runs), log_(log) {}

  absl::StatusOr<ShrinkResult> Run();

 private:
  bool Try(const scenario::Scenario& candidate, const std::string& what);
  void RemoveFaults();
  void ShortenFaults();
  void CutRandomFaultKinds();
  void CutWorkloads();
  void CutNodes();
  // The smallest value (at least `floor`) found to still fail.
  void Reduce(const std::string& what, const Getter& get, const Setter& set, uint64_t floor = 1);
  void CutTime();
  void CutLevels(int w);

  const LoadedScenario& original_;
  const uint64_t seed_;
  const size_t max_runs_;
  std::ostream& log_;
  std::set<std::string> target_;
  scenario::Scenario current_;
  uint64_t current_events_ = 0;
  size_t runs_ = 0;
};

bool Shrinker::Try(const scenario::Scenario& candidate, const std::string& what) {
  if (runs_ >= max_runs_) return false;
  std::string text;
  google::protobuf::TextFormat::PrintToString(candidate, &text);
  absl::StatusOr<LoadedScenario> loaded = ParseScenario(original_.path, text);
  if (!loaded.ok()) return false;  // a cut the validator refuses: not a run
  runs_++;
  const Verdict verdict = RunIsolated(*loaded, seed_);
  const bool same = std::any_of(verdict.failed.begin(), verdict.failed.end(),
                                [this](const std::string& name) { return target_.count(name) > 0; });
  if (!same) return false;
  current_ = candidate;
  current_events_ = verdict.events;
  log_ << "shrink [run " << runs_ << "] " << what << ": still fails, " << current_events_
       << " events\n";
  return true;
}

void Shrinker::Reduce(const std::string& what, const Getter& get, const Setter& set, uint64_t floor) {
  // A binary search for the smallest value that still fails, as if
  // failing were monotonic in it (it need not be: the result still fails).
  uint64_t low = floor, high = get(current_);
  if (low >= high) return;
  scenario::Scenario smallest = current_;
  set(smallest, floor);
  if (Try(smallest, absl::StrCat(what, " ", high, " -> ", floor))) return;
  low = floor + 1;
  while (low < high && runs_ < max_runs_) {
    const uint64_t middle = low + (high - low) / 2;
    scenario::Scenario candidate = current_;
    set(candidate, middle);
    if (Try(candidate, absl::StrCat(what, " ", high, " -> ", middle))) {
      high = middle;
    } else {
      low = middle + 1;
    }
  }
}

void Shrinker::RemoveFaults() {
  // Delta debugging (Zeller's ddmin) over the scripted actions.
  int granularity = 2;
  while (current_.faults().action_size() > 0 && runs_ < max_runs_) {
    const int count = current_.faults().action_size();
    const int chunks = std::min(granularity, count);
    bool reduced = false;
    for (int chunk = 0; chunk < chunks && !reduced; chunk++) {
      const int begin = chunk * count / chunks, end = (chunk + 1) * count / chunks;
      scenario::Scenario candidate = current_;
      candidate.mutable_faults()->clear_action();
      for (int i = 0; i < count; i++) {
        if (i < begin || i >= end) *candidate.mutable_faults()->add_action() = current_.faults().action(i);
      }
      reduced = Try(candidate, absl::StrCat("faults ", count, " -> ", count - (end - begin)));
    }
    if (reduced) {
      granularity = std::max(granularity - 1, 2);
    } else if (chunks >= count) {
      return;
    } else {
      granularity = std::min(granularity * 2, count);
    }
  }
}

void Shrinker::ShortenFaults() {
  for (int i = 0; i < current_.faults().action_size(); i++) {
    // Earlier faults need fewer operations before them. Moving one keeps
    // its place in the list: actions at one time apply in list order.
    Reduce(absl::StrCat("faults.action[", i, "] at_ms"),
           [i](const auto& s) { return s.faults().action(i).at_ms(); },
           [i](auto& s, uint64_t v) { s.mutable_faults()->mutable_action(i)->set_at_ms(v); }, 0);
    const FaultKind& kind = FaultKindOf(current_.faults().action(i).kind_case());
    if (kind.duration_ms == nullptr) continue;
    Reduce(absl::StrCat("faults.action[", i, "] duration_ms"),
           [i, &kind](const auto& s) { return kind.duration_ms(s.faults().action(i)); },
           [i, &kind](auto& s, uint64_t v) {
             kind.set_duration_ms(*s.mutable_faults()->mutable_action(i), v);
           });
  }
}

// When the script does not fail the same way: switch off one random kind
// at a time (every rate field set to zero).
void Shrinker::CutRandomFaultKinds() {
  const google::protobuf::Descriptor* descriptor = scenario::RandomFaults::descriptor();
  for (int f = 0; f < descriptor->field_count(); f++) {
    const google::protobuf::FieldDescriptor* field = descriptor->field(f);
    if (field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_DOUBLE) continue;
    const google::protobuf::Reflection* reflection = scenario::RandomFaults::GetReflection();
    if (reflection->GetDouble(current_.random_faults(), field) == 0) continue;
    scenario::Scenario candidate = current_;
    reflection->SetDouble(candidate.mutable_random_faults(), field, 0);
    Try(candidate, absl::StrCat("random_faults.", field->name(), " -> 0"));
  }
}

void Shrinker::CutWorkloads() {
  for (int w = current_.workload_size() - 1; w >= 0; w--) {
    const std::string& name = current_.workload(w).name();
    const bool needed = std::any_of(current_.workload().begin(), current_.workload().end(),
                                    [&](const auto& other) { return other.after() == name; });
    if (needed || current_.workload_size() == 1) continue;
    scenario::Scenario candidate = current_;
    candidate.mutable_workload()->DeleteSubrange(w, 1);
    Try(candidate, absl::StrCat("workload ", name, " removed"));
  }
  for (int w = 0; w < current_.workload_size(); w++) {
    const std::string prefix = absl::StrCat("workload ", current_.workload(w).name(), " ");
    if (current_.workload(w).has_kv()) {
      CutLevels(w);
      Reduce(prefix + "clients", [w](const auto& s) { return s.workload(w).kv().clients(); },
             [w](auto& s, uint64_t v) { s.mutable_workload(w)->mutable_kv()->set_clients(static_cast<uint32_t>(v)); });
      Reduce(prefix + "operations_per_client",
             [w](const auto& s) { return s.workload(w).kv().operations_per_client(); },
             [w](auto& s, uint64_t v) {
               s.mutable_workload(w)->mutable_kv()->set_operations_per_client(static_cast<uint32_t>(v));
             });
      Reduce(prefix + "key_count", [w](const auto& s) { return s.workload(w).kv().key_count(); },
             [w](auto& s, uint64_t v) { s.mutable_workload(w)->mutable_kv()->set_key_count(static_cast<uint32_t>(v)); });
    } else if (current_.workload(w).has_ping()) {
      Reduce(prefix + "clients", [w](const auto& s) { return s.workload(w).ping().clients(); },
             [w](auto& s, uint64_t v) { s.mutable_workload(w)->mutable_ping()->set_clients(static_cast<uint32_t>(v)); });
      Reduce(prefix + "requests_per_client",
             [w](const auto& s) { return s.workload(w).ping().requests_per_client(); },
             [w](auto& s, uint64_t v) {
               s.mutable_workload(w)->mutable_ping()->set_requests_per_client(static_cast<uint32_t>(v));
             });
    }
  }
}

// Each operation draws a level from a list: fewer levels, fewer suspects.
void Shrinker::CutLevels(int w) {
  for (const bool writes : {true, false}) {
    for (int i = 0;; i++) {
      const scenario::KvWorkload& kv = current_.workload(w).kv();
      const auto& levels = writes ? kv.write_consistency() : kv.read_consistency();
      if (levels.size() <= 1 || i >= levels.size()) break;
      scenario::Scenario candidate = current_;
      auto* list = writes ? candidate.mutable_workload(w)->mutable_kv()->mutable_write_consistency()
                          : candidate.mutable_workload(w)->mutable_kv()->mutable_read_consistency();
      list->erase(list->begin() + i);
      const std::string what = absl::StrCat("workload ", current_.workload(w).name(),
                                            writes ? " write" : " read", " level ",
                                            ConsistencyLevel_Name(levels[i]), " removed");
      if (Try(candidate, what)) i--;  // the next one moved into place i
    }
  }
}

// Less time after the last fault and between operations: fewer events.
void Shrinker::CutTime() {
  Reduce("checks.settle_ms", [](const auto& s) { return s.checks().settle_ms(); },
         [](auto& s, uint64_t v) { s.mutable_checks()->set_settle_ms(v); }, 0);
  for (int w = 0; w < current_.workload_size(); w++) {
    if (!current_.workload(w).has_kv()) continue;
    Reduce(absl::StrCat("workload ", current_.workload(w).name(), " think_time_ms"),
           [w](const auto& s) { return s.workload(w).kv().think_time_ms(); },
           [w](auto& s, uint64_t v) { s.mutable_workload(w)->mutable_kv()->set_think_time_ms(v); }, 0);
    Reduce(absl::StrCat("workload ", current_.workload(w).name(), " start_ms"),
           [w](const auto& s) { return s.workload(w).kv().start_ms(); },
           [w](auto& s, uint64_t v) { s.mutable_workload(w)->mutable_kv()->set_start_ms(v); }, 0);
  }
}

void Shrinker::CutNodes() {
  for (;;) {
    const uint32_t last = NodeCount(current_);
    scenario::Scenario candidate = current_;
    if (!RemoveLastNode(candidate)) return;
    ForgetNode(candidate, last);
    if (!Try(candidate, absl::StrCat("nodes ", last, " -> ", last - 1))) return;
  }
}

absl::StatusOr<ShrinkResult> Shrinker::Run() {
  const Verdict first = RunIsolated(original_, seed_);
  target_ = first.failed;
  if (target_.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(original_.path, " passes at seed ", seed_, ": nothing to shrink"));
  }
  ShrinkResult result;
  result.events_before = first.events;
  result.faults_before = first.faults_happened.action_size();
  current_ = original_.spec;
  current_events_ = first.events;
  log_ << "shrink: seed " << seed_ << " fails " << *target_.begin() << (target_.size() > 1 ? ", ..." : "")
       << " after " << first.events << " events and " << result.faults_before << " faults\n";
  // A sweep's requirements mean nothing to one seed.
  current_.mutable_checks()->clear_sweep_reaches_probe();
  // The faults that happened, as a script.
  scenario::Scenario scripted = current_;
  scripted.clear_random_faults();
  *scripted.mutable_faults() = first.faults_happened;
  result.faults_scripted = Try(scripted, "random faults replaced by the faults that happened");
  if (result.faults_scripted) {
    RemoveFaults();
  } else {
    log_ << "shrink: the faults that happened, as a script, do not fail the same way; "
            "cutting random fault kinds instead\n";
    CutRandomFaultKinds();
  }
  // Until a round cuts nothing (or the runs run out): each cut can make
  // another possible.
  if (current_.buggify()) {
    scenario::Scenario candidate = current_;
    candidate.set_buggify(false);
    Try(candidate, "buggify off");
  }
  for (uint64_t before = 0; before != current_events_ && runs_ < max_runs_;) {
    before = current_events_;
    CutWorkloads();
    CutNodes();
    CutTime();
    if (result.faults_scripted) {
      RemoveFaults();
      ShortenFaults();
    }
  }
  result.spec = current_;
  result.events_after = current_events_;
  result.faults_after = current_.faults().action_size();
  result.runs = runs_;
  result.failing = target_;
  return result;
}

}  // namespace

absl::StatusOr<ShrinkResult> Shrink(const LoadedScenario& scenario, uint64_t seed, size_t max_runs,
                                    std::ostream& log) {
  return Shrinker(scenario, seed, max_runs, log).Run();
}

std::string ShrunkScenarioText(const ShrinkResult& result, const std::string& original_path,
                               const std::string& shrunk_path, uint64_t seed) {
  std::string failing;
  for (const std::string& name : result.failing) absl::StrAppend(&failing, failing.empty() ? "" : ", ", name);
  std::string text = absl::StrCat(
      "# Shrunk by `./charybdis sim --scenario=", original_path, " --seed=", seed, " --shrink`.\n",
      "# Fails as the original did (", failing, "): ", result.events_after, " events instead of ",
      result.events_before, ", ", result.faults_after, " scripted faults instead of ",
      result.faults_before, " that happened.\n", "# Replay: ./charybdis sim --scenario=", shrunk_path,
      " --seed=", seed, "\n");
  std::string body;
  google::protobuf::TextFormat::PrintToString(result.spec, &body);
  return text + body;
}

}  // namespace charybdis::sim
