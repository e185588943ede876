#pragma once

#include "sim/cluster.h"
#include "sim/workload.h"

namespace charybdis::sim {

// After faults heal: every running node sees exactly the running nodes as up.
CheckResult CheckViewsConverge(const Cluster& cluster);

}  // namespace charybdis::sim
