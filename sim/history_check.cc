#include "sim/history_check.h"

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "core/cluster/token_ring.h"
#include "sim/history_checks.h"
#include "sim/read_your_writes_check.h"
#include "sim/scenario_checks.h"
#include "sim/semantics_checks.h"
#include "sim/topology.h"
#include "sim/written_values_check.h"

namespace charybdis::sim {

std::vector<CheckResult> CheckRecordedHistory(const LoadedScenario& scenario, const History& history) {
  // Only the replication factors matter here, not the token positions.
  const TokenRing ring(LayoutOf(scenario.topology, scenario.spec, /*token_seed=*/0));
  return CheckHistory(scenario.spec.checks(), ring, history);
}

namespace {

CheckResult RunCheck(const std::string& name, const TokenRing& ring, const History& history) {
  if (name == "linearizable") return CheckLinearizableHistory(history);
  if (name == "read_your_writes") return CheckReadYourWrites(ring, history);
  if (name == "monotonic_reads") return CheckMonotonicReads(ring, history);
  if (name == "last_write_wins") return CheckLastWriteWins(ring, history);
  if (name == "coordinator_timestamps") return CheckCoordinatorTimestamps(history);
  CHARYBDIS_ASSERT(name == "reads_return_written_values");  // kHistoryChecks has no other
  return CheckReadsReturnWrittenValues(history);
}

}  // namespace

std::vector<CheckResult> CheckHistory(const scenario::Checks& checks, const TokenRing& ring,
                                      const History& history) {
  std::vector<CheckResult> results;
  for (const HistoryCheckField& check : kHistoryChecks) {
    if ((checks.*check.wanted)()) results.push_back(RunCheck(check.name, ring, history));
  }
  return results;
}

std::string HistoryCheckNames() {
  std::string names;
  for (const HistoryCheckField& check : kHistoryChecks) {
    absl::StrAppend(&names, names.empty() ? "" : ", ", check.name);
  }
  return names;
}

}  // namespace charybdis::sim
