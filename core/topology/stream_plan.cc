#include "core/topology/stream_plan.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "core/env/assert.h"
#include "core/topology/placement.h"

namespace charybdis::topology {

namespace {

bool Holds(const std::vector<NodeId>& nodes, NodeId node) {
  return std::find(nodes.begin(), nodes.end(), node) != nodes.end();
}

// Who sends a range that `to` gains: the owners now that it may come from.
std::vector<NodeId> SourcesOf(const Move& move, const std::vector<NodeId>& now, const std::vector<NodeId>& after) {
  // A raised replication: no owner loses the range, and a write
  // acknowledged at QUORUM may be on a majority only, so all of them.
  if (move.operation == Operation::kReplicate) return now;
  std::vector<NodeId> sources;
  const bool loser_is_dead = move.operation == Operation::kRemove || move.operation == Operation::kReplace;
  const NodeId dead = move.operation == Operation::kReplace ? move.replaced : move.node;
  for (NodeId owner : now) {
    if (loser_is_dead ? owner != dead : !Holds(after, owner)) sources.push_back(owner);
  }
  CHARYBDIS_ASSERT(!sources.empty());
  CHARYBDIS_ASSERT(loser_is_dead || sources.size() == 1);  // one pending replica, so one loser
  return sources;
}

// The (to, from) pairs of a range whose owners are `now`, then `after`:
// each pending replica from its sources; and where a lowered replication
// drops owners, each owner that stays from each dropped one (a write
// acknowledged at QUORUM before the change may be on the dropped ones
// only).
std::vector<std::pair<NodeId, NodeId>> TransfersAt(const Move& move, const std::vector<NodeId>& now,
                                                   const std::vector<NodeId>& after) {
  std::vector<std::pair<NodeId, NodeId>> transfers;
  for (NodeId to : after) {
    if (!Holds(now, to)) {
      for (NodeId from : SourcesOf(move, now, after)) transfers.emplace_back(to, from);
    } else if (move.operation == Operation::kReplicate) {
      for (NodeId from : now) {
        if (!Holds(after, from)) transfers.emplace_back(to, from);
      }
    }
  }
  return transfers;
}

}  // namespace

std::vector<Transfer> PlanStreams(const Topology& topology, const PlacedBy& placed_by) {
  CHARYBDIS_ASSERT(topology.move().has_value());
  const Placement placement(topology, placed_by, 1);
  // Within the ranges between consecutive tokens of either ring, both rings'
  // replicas are constant.
  std::set<Token> bounds;
  for (const auto& vnode : placement.now()->tokens()) bounds.insert(vnode.token);
  for (const auto& vnode : placement.after()->tokens()) bounds.insert(vnode.token);
  std::map<std::pair<NodeId, NodeId>, std::vector<TokenSpan>> spans;  // by (to, from), ascending
  ForEachRingRange(bounds, [&](Token owner_token, TokenSpan span) {
    const std::vector<NodeId>& now = placement.now()->ReplicasOf(owner_token);
    const std::vector<NodeId>& after = placement.after()->ReplicasOf(owner_token);
    for (const auto& [to, from] : TransfersAt(*topology.move(), now, after)) AppendSpan(spans[{to, from}], span);
  });
  std::vector<Transfer> transfers;
  for (auto& [pair, pair_spans] : spans) transfers.push_back(Transfer{pair.first, pair.second, std::move(pair_spans)});
  return transfers;
}

std::vector<Transfer> MergeTransfers(const std::vector<Transfer>& transfers) {
  std::map<std::pair<NodeId, NodeId>, std::vector<TokenSpan>> spans;
  for (const Transfer& transfer : transfers) {
    std::vector<TokenSpan>& pair_spans = spans[{transfer.to, transfer.from}];
    pair_spans.insert(pair_spans.end(), transfer.spans.begin(), transfer.spans.end());
  }
  std::vector<Transfer> merged;
  for (auto& [pair, pair_spans] : spans) {
    std::sort(pair_spans.begin(), pair_spans.end(),
              [](const TokenSpan& a, const TokenSpan& b) { return a.first < b.first; });
    Transfer& transfer = merged.emplace_back(Transfer{pair.first, pair.second, {}});
    for (const TokenSpan& span : pair_spans) {
      // Overlapping or adjacent to the last: extend it.
      std::vector<TokenSpan>& out = transfer.spans;
      if (!out.empty() && (out.back().last == std::numeric_limits<Token>::max() || out.back().last + 1 >= span.first)) {
        out.back().last = std::max(out.back().last, span.last);
      } else {
        out.push_back(span);
      }
    }
  }
  return merged;
}

}  // namespace charybdis::topology
