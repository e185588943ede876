#include "sim/history_check.h"

#include "core/token_ring.h"
#include "sim/read_your_writes_check.h"
#include "sim/scenario_checks.h"
#include "sim/semantics_checks.h"
#include "sim/topology.h"

namespace charybdis::sim {

std::vector<CheckResult> CheckRecordedHistory(const LoadedScenario& scenario, const History& history) {
  // Only the replication factors matter here, not the token positions.
  const TokenRing ring(LayoutOf(scenario.topology, scenario.spec, /*token_seed=*/0));
  return CheckHistory(scenario.spec.checks(), ring, history);
}

std::vector<CheckResult> CheckHistory(const scenario::Checks& checks, const TokenRing& ring,
                                      const History& history) {
  std::vector<CheckResult> results;
  if (checks.linearizable()) results.push_back(CheckLinearizableHistory(history));
  if (checks.read_your_writes()) results.push_back(CheckReadYourWrites(ring, history));
  if (checks.monotonic_reads()) results.push_back(CheckMonotonicReads(ring, history));
  if (checks.last_write_wins()) results.push_back(CheckLastWriteWins(ring, history));
  if (checks.coordinator_timestamps()) results.push_back(CheckCoordinatorTimestamps(history));
  return results;
}

}  // namespace charybdis::sim
