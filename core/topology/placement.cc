#include "core/topology/placement.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"

namespace charybdis::topology {

namespace {

ClusterLayout LayoutOf(const Topology& topology, const std::map<NodeId, std::vector<Token>>& owners,
                       const ReplicationConfig& replication, uint32_t shards_per_node) {
  ClusterLayout layout;
  layout.shards_per_node = shards_per_node;
  layout.replication = replication;
  for (const auto& [id, tokens] : owners) {
    const Member& member = topology.members().at(id);
    layout.nodes.push_back(NodeInfo{id, member.datacenter, member.rack});
  }
  return layout;
}

absl::Status CheckOwners(const Topology& topology, const std::map<NodeId, std::vector<Token>>& owners,
                         const ReplicationConfig& replication, const char* which) {
  if (owners.empty()) return absl::FailedPreconditionError(absl::StrCat("no node would own tokens ", which));
  if (replication.strategy == ReplicationConfig::Strategy::kSimple) {
    if (owners.size() >= replication.replication_factor) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(owners.size(), " nodes would own tokens ", which,
                                                      ", fewer than the replication factor ", replication.replication_factor));
  }
  std::map<std::string, uint32_t> per_datacenter = OwnersPerDatacenter(topology, owners);
  for (const auto& [datacenter, factor] : replication.per_datacenter) {
    if (per_datacenter[datacenter] >= factor) continue;
    return absl::FailedPreconditionError(absl::StrCat("datacenter ", datacenter, " would have ", per_datacenter[datacenter],
                                                      " nodes ", which, ", fewer than its replication factor ", factor));
  }
  return absl::OkStatus();
}

}  // namespace

std::map<std::string, uint32_t> OwnersPerDatacenter(const Topology& topology,
                                                    const std::map<NodeId, std::vector<Token>>& owners) {
  std::map<std::string, uint32_t> per_datacenter;
  for (const auto& [id, tokens] : owners) per_datacenter[topology.members().at(id).datacenter]++;
  return per_datacenter;
}

std::vector<Member> MembersOfRing(const TokenRing& ring) {
  std::map<NodeId, std::vector<Token>> tokens;
  for (const auto& vnode : ring.tokens()) tokens[vnode.node].push_back(vnode.token);
  std::vector<Member> members;
  for (const NodeInfo& node : ring.layout().nodes) {
    CHARYBDIS_ASSERT(tokens.count(node.id) == 1);  // every node of a ring holds tokens
    members.push_back(Member{node.id, "", node.datacenter, node.rack, tokens.at(node.id), NodeState::kNormal});
  }
  return members;
}

PlacedBy PlacedByOf(const Topology& topology, const TableReplication& table) {
  if (table.keyspace.empty()) return {table.replication, table.replication};  // the cluster's
  const std::optional<Move>& move = topology.move();
  if (move && move->operation == Operation::kReplicate && move->replicating.keyspace == table.keyspace &&
      move->replicating.keyspace_created_at == table.keyspace_created_at) {
    return {move->replicating.from, move->replicating.to};
  }
  auto changed = topology.changed_replications().find(table.keyspace);
  if (changed != topology.changed_replications().end() &&
      changed->second.keyspace_created_at == table.keyspace_created_at) {
    return {changed->second.replication, changed->second.replication};
  }
  return {table.replication, table.replication};
}

absl::Status CheckPlaceable(const Topology& topology, const PlacedBy& placed_by) {
  if (absl::Status now = CheckOwners(topology, topology.OwnersNow(), placed_by.now, "now"); !now.ok()) return now;
  return CheckOwners(topology, topology.OwnersAfter(), placed_by.after, "after the operation");
}

Placement::Placement(const Topology& topology, const PlacedBy& placed_by, uint32_t shards_per_node)
    : version_(topology.version()),
      reads_moved_(topology.move() && topology.move()->stage == Stage::kWriteBothReadNew),
      class_changes_(placed_by.now.strategy != placed_by.after.strategy) {
  CHARYBDIS_ASSERT(CheckPlaceable(topology, placed_by).ok());
  const auto owners_now = topology.OwnersNow();
  now_ = std::make_shared<const TokenRing>(LayoutOf(topology, owners_now, placed_by.now, shards_per_node), owners_now);
  const auto owners_after = topology.OwnersAfter();
  if (owners_after == owners_now && placed_by.after == placed_by.now) {
    after_ = now_;  // nothing of this placement moves
    return;
  }
  after_ = std::make_shared<const TokenRing>(LayoutOf(topology, owners_after, placed_by.after, shards_per_node),
                                             owners_after);
}

Placement::Replicas Placement::WriteReplicasOf(Token token) const {
  Replicas replicas;
  replicas.natural = now_->ReplicasOf(token);
  const std::vector<NodeId>& after = after_->ReplicasOf(token);
  for (NodeId node : after) {
    if (std::find(replicas.natural.begin(), replicas.natural.end(), node) == replicas.natural.end()) {
      replicas.pending.push_back(node);
    }
  }
  for (NodeId node : replicas.natural) {
    if (std::find(after.begin(), after.end(), node) == after.end()) replicas.dropped.push_back(node);
  }
  replicas.also_among_after = replicas.dropped.size() > replicas.pending.size() ||
                              (class_changes_ && !replicas.dropped.empty());
  CHARYBDIS_ASSERT(replicas.natural.size() == now_->total_replication_factor());
  CHARYBDIS_ASSERT(replicas.pending.size() <= after_->total_replication_factor());
  return replicas;
}

const std::vector<NodeId>& Placement::ReadReplicasOf(Token token) const { return reads()->ReplicasOf(token); }

}  // namespace charybdis::topology
