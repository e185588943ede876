#pragma once

#include <string>
#include <vector>

#include "core/cluster/token_ring.h"
#include "core/workload/history.h"
#include "sim/scenario_loader.h"
#include "sim/workload.h"

namespace charybdis::sim {

// The checks of a scenario that need nothing but its history (the list of
// sim/history_checks.h), on a history recorded elsewhere:
// by `charybdis-ctl run-scenario` against real nodes. The others need the
// simulated cluster and are left out.
std::vector<CheckResult> CheckRecordedHistory(const LoadedScenario& scenario, const History& history);

// Those checks on any history, simulated or recorded, with the ring that
// gives the replication factors.
std::vector<CheckResult> CheckHistory(const scenario::Checks& checks, const TokenRing& ring,
                                      const History& history);

// "linearizable, read_your_writes, ...", for messages.
std::string HistoryCheckNames();

}  // namespace charybdis::sim
