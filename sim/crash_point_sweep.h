#pragma once

#include <cstdint>
#include <ostream>

#include "sim/scenario_loader.h"

namespace charybdis::sim {

// Every crash point, not a random one (--every_crash_point): for one seed
// of a small scenario, crash node `node` at each of its synced storage
// writes in turn (the acceptor's promises and accepts, hints, the batch
// log, the schema log, data: every synced write of every shard), in three
// ways: before the write is durable with a power cut, after it is durable
// but before its caller hears with a crash, and the same with a power
// cut; and with a power cut right after each of its replies (a write ack,
// a promise, an accept reply, a commit ack, a client answer), which
// catches state answered for before it was synced. The node restarts
// `restart_after_ms` later, and the run goes on and runs the scenario's
// checks. The run before the crash point is the
// same for every point, so point k is always the same write.
// Prints a line per failing point and a summary; returns the sim's exit
// code (0: every point passed).
int RunEveryCrashPoint(const LoadedScenario& scenario, uint64_t seed, uint32_t node, uint64_t restart_after_ms,
                       std::ostream& out);

}  // namespace charybdis::sim
