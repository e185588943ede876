#include "core/topology/cleanup_plan.h"

#include <algorithm>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "core/topology/placement.h"

namespace charybdis::topology {

absl::Status CheckCleanable(const Topology& topology, NodeId node) {
  if (const std::optional<Move>& move = topology.move(); move.has_value()) {
    return absl::FailedPreconditionError(absl::StrCat("a ", OperationName(move->operation), " of node ", move->node,
                                                      " is in progress (topology version ", topology.version(),
                                                      "): clean up once it is done"));
  }
  const Member* member = topology.Find(node);
  if (member == nullptr || member->state != NodeState::kNormal) {
    return absl::FailedPreconditionError(absl::StrCat("node ", node, " is not a normal member: nothing to clean up"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TokenSpan>> SpansToCleanUp(const Topology& topology, const ReplicationConfig& replication,
                                                     NodeId node) {
  if (absl::Status cleanable = CheckCleanable(topology, node); !cleanable.ok()) return cleanable;
  if (absl::Status placeable = CheckPlaceable(topology, replication); !placeable.ok()) return placeable;
  const Placement placement(topology, replication, 1);
  std::set<Token> bounds;
  for (const auto& vnode : placement.now()->tokens()) bounds.insert(vnode.token);
  std::vector<TokenSpan> spans;
  ForEachRingRange(bounds, [&](Token owner, TokenSpan span) {
    const std::vector<NodeId>& replicas = placement.now()->ReplicasOf(owner);
    if (std::find(replicas.begin(), replicas.end(), node) == replicas.end()) AppendSpan(spans, span);
  });
  return spans;
}

}  // namespace charybdis::topology
