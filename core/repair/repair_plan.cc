#include "core/repair/repair_plan.h"

#include <algorithm>
#include <limits>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "core/topology/placement.h"

namespace charybdis::repair {

namespace {

// The request's range as an inclusive span (the whole ring without one).
topology::TokenSpan RequestedSpan(const RepairOp& request) {
  if (!request.has_range()) {
    return {std::numeric_limits<Token>::min(), std::numeric_limits<Token>::max()};
  }
  CHARYBDIS_ASSERT(request.start_token() < request.end_token());
  return {request.start_token() + 1, request.end_token()};
}

}  // namespace

absl::Status CheckRepairable(const topology::Topology& topology, NodeId node) {
  if (const std::optional<topology::Move>& move = topology.move(); move.has_value()) {
    return absl::FailedPreconditionError(absl::StrCat("a ", topology::OperationName(move->operation), " of node ",
                                                      move->node, " is in progress (topology version ",
                                                      topology.version(), "): repair once it is done"));
  }
  const topology::Member* member = topology.Find(node);
  if (member == nullptr || member->state != topology::NodeState::kNormal) {
    return absl::FailedPreconditionError(absl::StrCat("node ", node, " is not a normal member: it has no ranges"));
  }
  return absl::OkStatus();
}

absl::Status CheckRequest(const topology::Topology& topology, NodeId node, const RepairOp& request) {
  if (request.has_range() && request.start_token() >= request.end_token()) {
    return absl::InvalidArgumentError(absl::StrCat("the range (", request.start_token(), ", ", request.end_token(),
                                                   "] is empty or wraps: give a wrapping range as two"));
  }
  if (!request.table().empty() && request.keyspace().empty()) {
    return absl::InvalidArgumentError("a table to repair needs its keyspace");
  }
  if (!request.datacenter().empty()) {
    const topology::Member* member = topology.Find(node);
    if (member == nullptr || member->datacenter != request.datacenter()) {
      return absl::InvalidArgumentError(absl::StrCat("node ", node, " is not in datacenter '",
                                                     request.datacenter(), "': repair from one of its nodes"));
    }
  }
  return absl::OkStatus();
}

std::map<std::string, ReplicationConfig> TablesToRepair(const std::map<std::string, ReplicationConfig>& tables,
                                                         const RepairOp& request) {
  std::map<std::string, ReplicationConfig> chosen;
  const std::string named = request.table().empty() ? absl::StrCat(request.keyspace(), ".")
                                                    : absl::StrCat(request.keyspace(), ".", request.table());
  for (const auto& [table, replication] : tables) {
    // Storage tables are "keyspace.table", or "keyspace.table@N" for one
    // the schema log created (core/cql/schema.h).
    const bool named_table = table == named || absl::StartsWith(table, absl::StrCat(named, "@"));
    const bool in_keyspace = request.table().empty() && absl::StartsWith(table, named);
    if (request.keyspace().empty() || named_table || in_keyspace) chosen.emplace(table, replication);
  }
  return chosen;
}

absl::StatusOr<std::vector<RepairRange>> RangesToRepair(const topology::Topology& topology,
                                                        const ReplicationConfig& replication, NodeId node,
                                                        const RepairOp& request) {
  if (absl::Status repairable = CheckRepairable(topology, node); !repairable.ok()) return repairable;
  if (absl::Status placeable = topology::CheckPlaceable(topology, replication); !placeable.ok()) return placeable;
  const topology::Placement placement(topology, replication, 1);
  const topology::TokenSpan wanted = RequestedSpan(request);
  std::set<Token> bounds;
  for (const auto& vnode : placement.now()->tokens()) bounds.insert(vnode.token);
  std::vector<RepairRange> ranges;
  topology::ForEachRingRange(bounds, [&](Token owner, topology::TokenSpan span) {
    const std::vector<NodeId>& owners = placement.now()->ReplicasOf(owner);
    if (std::find(owners.begin(), owners.end(), node) == owners.end()) return;
    if (request.primary_range() && owners.front() != node) return;
    span.first = std::max(span.first, wanted.first);
    span.last = std::min(span.last, wanted.last);
    if (span.first > span.last) return;
    RepairRange range{span, {node}};
    for (NodeId replica : owners) {
      const topology::Member* member = topology.Find(replica);
      CHARYBDIS_ASSERT(member != nullptr);
      const bool in_datacenter = request.datacenter().empty() || member->datacenter == request.datacenter();
      if (replica != node && in_datacenter) range.replicas.push_back(replica);
    }
    if (range.replicas.size() < 2) return;
    // Adjacent ranges of the same replicas compare as one.
    if (!ranges.empty() && ranges.back().replicas == range.replicas && ranges.back().span.last + 1 == span.first) {
      ranges.back().span.last = span.last;
      return;
    }
    ranges.push_back(std::move(range));
  });
  return ranges;
}

}  // namespace charybdis::repair
