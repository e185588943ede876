#pragma once

#include <cstdint>
#include <vector>

#include "core/cluster/cluster_layout.h"
#include "core/data/token.h"
#include "core/topology/placement.h"
#include "core/topology/token_spans.h"
#include "core/topology/topology.h"

namespace charybdis::topology {

// What one pending replica must receive from one source before the
// operation's reads move.
struct Transfer {
  NodeId to = 0;
  NodeId from = 0;
  std::vector<TokenSpan> spans;  // ascending, disjoint, adjacent ones merged
};

// The streaming an operation in progress needs, for one replication
// (docs/topology.md "Streaming"): every token range gains a pending
// replica, which receives it
// - from the one owner that loses the range, when that owner is alive by
//   design (join: the displaced replica; decommission: the leaving node),
//   so that a write acknowledged at QUORUM before the move cannot be
//   missed by a stale source;
// - from every surviving owner of the range when the owner that loses it
//   is dead (removenode, replace), merged on arrival;
// - from every owner of the range when a replication is raised (no owner
//   loses it), merged on arrival; and when one is lowered, every owner that
//   stays receives the range from every owner dropped.
// Ordered by (to, from). REQUIRES: an operation in progress, and
// CheckPlaceable(topology, placed_by).
std::vector<Transfer> PlanStreams(const Topology& topology, const PlacedBy& placed_by);

// One transfer per (to, from) of all of `transfers` (the plans of several
// replications), each span list their union: every table streams it, so a
// table may receive ranges only another replication needs, never fewer.
std::vector<Transfer> MergeTransfers(const std::vector<Transfer>& transfers);

}  // namespace charybdis::topology
