#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "sim/scenario_loader.h"
#include "sim/sweep.h"

namespace charybdis::sim {

// After a sweep: per scenario, the Buggify fires per site and the probes
// hit over every seed, and the probes no seed reached. Returns false when
// a probe the scenario requires (checks.sweep_reaches_probe) was never
// reached; says so on `out`.
bool ReportCoverage(const std::vector<LoadedScenario>& scenarios,
                    const std::vector<RunRecord>& records, uint64_t first_seed,
                    uint64_t last_seed, std::ostream& out);

}  // namespace charybdis::sim
