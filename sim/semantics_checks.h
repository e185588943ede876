#pragma once

#include <string>

#include "core/cluster/token_ring.h"
#include "core/workload/history.h"
#include "sim/workload.h"

namespace charybdis::sim {

// A version of a key's value as a client sees it: live with a value, a
// tombstone, or nothing at all (timestamp 0, never written).
struct Version {
  Timestamp timestamp = 0;
  bool live = false;
  std::string value;
};

// ScyllaDB's last-write-wins order for one cell (docs/semantics.md): the
// higher timestamp wins; at equal timestamps a tombstone beats a live
// cell; then the larger value bytes (unsigned). >0 if `a` wins, <0 if `b`
// wins, 0 if they are the same version. Written here from the semantics
// table, apart from core/data/cell.cc on purpose: an oracle that shared
// the merge code would share its bugs.
int CompareVersions(const Version& a, const Version& b);

// What an ok operation of the history wrote or read, as a version.
Version VersionOf(const HistoryOp& completion);

// Monotonic reads: a read invoked after another read completed, at levels
// that overlap (R1 + R2 > RF, per datacenter for two LOCAL levels),
// returns that read's version or a newer one. This is what blocking
// read-repair promises, also for values whose writes timed out.
CheckResult CheckMonotonicReads(const TokenRing& ring, const History& history);

// Last write wins, ties included: every read returns a version at least
// as new, in ScyllaDB's order, as every write acknowledged before the read
// began at an overlapping level (read_your_writes compares timestamps
// only, so it cannot see a tie broken the wrong way).
CheckResult CheckLastWriteWins(const TokenRing& ring, const History& history);

// The timestamps that one coordinator shard stamps in one life strictly
// increase: no two acknowledged writes share one, and a write invoked
// after another completed has the larger, even when the coordinator's
// clock stepped back in between. Writes with client timestamps and
// Paxos writes (stamped by their ballots) are left out, and so are
// completions that do not name their coordinator's life.
CheckResult CheckCoordinatorTimestamps(const History& history);

}  // namespace charybdis::sim
