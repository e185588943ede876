#pragma once

#include "core/cluster/token_ring.h"
#include "core/workload/history.h"
#include "sim/workload.h"

namespace charybdis::sim {

// Whether a read at `read` is guaranteed to reach a replica that
// acknowledged a write at `write` (W + R > RF, counted per datacenter for
// two LOCAL levels in one datacenter; an EACH_QUORUM write holds a local
// quorum everywhere; ANY guarantees nothing).
bool LevelsOverlap(const TokenRing& ring, ConsistencyLevel write, const std::string& write_dc,
                   ConsistencyLevel read, const std::string& read_dc);

// No lost acknowledged writes, and read-your-writes: every successful read
// reflects (has a timestamp at least that of) every write acknowledged
// before the read began at a level the read's level overlaps.
CheckResult CheckReadYourWrites(const TokenRing& ring, const History& history);

}  // namespace charybdis::sim
