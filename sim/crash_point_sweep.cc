#include "sim/crash_point_sweep.h"

#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "sim/exit_codes.h"
#include "sim/run.h"
#include "sim/sweep.h"

namespace charybdis::sim {

namespace {

struct Way {
  scenario::CrashPointFault::Point point;
  bool power_cut;
  const char* name;
};

constexpr Way kWays[] = {
    {scenario::CrashPointFault::BEFORE_SYNC, true, "before sync, power cut"},
    {scenario::CrashPointFault::AFTER_SYNC, false, "after sync, crash"},
    {scenario::CrashPointFault::AFTER_SYNC, true, "after sync, power cut"},
    // What was answered must have been durable: a power cut right after
    // each reply catches state acknowledged before its fsync.
    {scenario::CrashPointFault::AFTER_REPLY, true, "after a reply, power cut"},
};

// The scenario with one more fault: the crash point, armed from the start.
LoadedScenario WithCrashPoint(const LoadedScenario& scenario, uint32_t node, const Way& way, uint64_t skip,
                              uint64_t restart_after_ms) {
  LoadedScenario variant = scenario;
  scenario::FaultAction& action = *variant.spec.mutable_faults()->add_action();
  action.set_at_ms(0);
  scenario::CrashPointFault& point = *action.mutable_crash_point();
  point.set_node(node);
  point.set_point(way.point);
  point.set_power_cut(way.power_cut);
  point.set_skip(skip);
  point.set_restart_after_ms(restart_after_ms);
  return variant;
}

// What the node's synced writes held, by subsystem: which of them the
// points cover ("node 1's synced writes hold: batch log 3, data 50, ...").
std::string SyncedWritesHold(const RunResult& counted, uint32_t node) {
  std::string line = absl::StrCat("node ", node, "'s synced writes hold:");
  const nlohmann::json kinds =
      counted.details.value("synced_writes_by_kind", nlohmann::json::object()).value(std::to_string(node), nlohmann::json::object());
  bool first = true;
  for (const auto& [kind, count] : kinds.items()) {
    absl::StrAppend(&line, first ? " " : ", ", kind, " ", count.get<uint64_t>());
    first = false;
  }
  return absl::StrCat(line, first ? " nothing" : "", "\n");
}

}  // namespace

int RunEveryCrashPoint(const LoadedScenario& scenario, uint64_t seed, uint32_t node, uint64_t restart_after_ms,
                       std::ostream& out) {
  CHARYBDIS_ASSERT(node >= 1);
  uint64_t runs = 0, failed = 0;
  int exit_code = kExitPassed;
  // A point that never fires counts the moments of a whole run; the crash
  // kind does not change them, so each kind of moment is counted once.
  std::map<scenario::CrashPointFault::Point, uint64_t> moments_of;
  for (const Way& way : kWays) {
    if (moments_of.count(way.point)) continue;
    const RunResult counted = RunScenario(
        WithCrashPoint(scenario, node, way, std::numeric_limits<uint64_t>::max(), restart_after_ms), seed, nullptr,
        nullptr);
    moments_of[way.point] = counted.details.value("crash_point_moments", uint64_t{0});
    if (way.point == scenario::CrashPointFault::BEFORE_SYNC) out << SyncedWritesHold(counted, node);
  }
  for (const Way& way : kWays) {
    const uint64_t moments = moments_of.at(way.point);
    out << "node " << node << ", " << way.name << ": " << moments
        << (way.point == scenario::CrashPointFault::AFTER_REPLY ? " replies\n" : " synced writes\n");
    for (uint64_t skip = 0; skip < moments; skip++) {
      const RunResult result = RunScenario(WithCrashPoint(scenario, node, way, skip, restart_after_ms), seed, nullptr, nullptr);
      runs++;
      if (result.outcome == Outcome::kPassed) continue;
      failed++;
      exit_code = WorseExitCode(exit_code, ExitCodeOf(result.outcome));
      if (failed <= 20) out << "  FAILED at moment " << skip + 1 << " (" << way.name << "): " << FailedChecks(result) << "\n";
    }
  }
  out << (failed == 0 ? "every crash point passed: " : absl::StrCat(failed, " of ")) << runs << " runs, "
      << scenario.path << " seed " << seed << ", node " << node << "\n";
  if (runs == 0) {
    out << "no synced write of node " << node << " to crash at\n";
    return kExitCheckFailed;
  }
  return exit_code;
}

}  // namespace charybdis::sim
