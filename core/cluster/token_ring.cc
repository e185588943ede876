#include "core/cluster/token_ring.h"

#include <algorithm>
#include <set>

#include "core/env/assert.h"
#include "core/env/random.h"

namespace charybdis {

const NodeInfo& ClusterLayout::node(NodeId id) const {
  CHARYBDIS_ASSERT(id >= 1);
  CHARYBDIS_ASSERT(id <= nodes.size());
  const NodeInfo& info = nodes[id - 1];
  CHARYBDIS_ASSERT(info.id == id);
  return info;
}

TokenRing::TokenRing(const ClusterLayout& layout) : layout_(layout) {
  CHARYBDIS_ASSERT(!layout.nodes.empty());
  CHARYBDIS_ASSERT(layout.vnodes_per_node >= 1);
  std::set<Token> used;
  for (const NodeInfo& node : layout.nodes) {
    Random random(Mix64(layout.token_seed ^ Mix64(node.id)));
    for (uint32_t i = 0; i < layout.vnodes_per_node; i++) {
      Token token;
      do {
        token = static_cast<Token>(random.Next());
      } while (token == kMinimumToken || !used.insert(token).second);
      tokens_.push_back(VnodeToken{token, node.id});
    }
  }
  std::sort(tokens_.begin(), tokens_.end(),
            [](const VnodeToken& a, const VnodeToken& b) { return a.token < b.token; });

  const ReplicationConfig& replication = layout.replication;
  if (replication.strategy == ReplicationConfig::Strategy::kSimple) {
    total_replication_factor_ = replication.replication_factor;
  } else {
    for (const auto& [datacenter, factor] : replication.per_datacenter) {
      total_replication_factor_ += factor;
    }
  }
  CHARYBDIS_ASSERT(total_replication_factor_ >= 1);
  for (size_t i = 0; i < tokens_.size(); i++) {
    replicas_.push_back(replication.strategy == ReplicationConfig::Strategy::kSimple
                            ? WalkSimple(i)
                            : WalkNetworkTopology(i));
    CHARYBDIS_ASSERT(replicas_.back().size() == total_replication_factor_);
  }
}

uint32_t TokenRing::ReplicationFactorIn(const std::string& datacenter) const {
  const auto& per_datacenter = layout_.replication.per_datacenter;
  auto it = per_datacenter.find(datacenter);
  return it == per_datacenter.end() ? 0 : it->second;
}

const std::vector<NodeId>& TokenRing::ReplicasOf(Token token) const {
  auto it = std::lower_bound(tokens_.begin(), tokens_.end(), token,
                             [](const VnodeToken& entry, Token t) { return entry.token < t; });
  const size_t index = it == tokens_.end() ? 0 : static_cast<size_t>(it - tokens_.begin());
  return replicas_[index];
}

std::vector<NodeId> TokenRing::WalkSimple(size_t start) const {
  std::vector<NodeId> replicas;
  const uint32_t factor = layout_.replication.replication_factor;
  for (size_t step = 0; step < tokens_.size() && replicas.size() < factor; step++) {
    const NodeId node = tokens_[(start + step) % tokens_.size()].node;
    if (std::find(replicas.begin(), replicas.end(), node) == replicas.end()) {
      replicas.push_back(node);
    }
  }
  return replicas;
}

std::vector<NodeId> TokenRing::WalkNetworkTopology(size_t start) const {
  // Distinct nodes in ring-walk order from `start`.
  std::vector<NodeId> walk;
  for (size_t step = 0; step < tokens_.size(); step++) {
    const NodeId node = tokens_[(start + step) % tokens_.size()].node;
    if (std::find(walk.begin(), walk.end(), node) == walk.end()) walk.push_back(node);
  }
  std::set<NodeId> chosen;
  for (const auto& [datacenter, factor] : layout_.replication.per_datacenter) {
    std::set<std::string> racks_used;
    std::vector<NodeId> skipped;
    uint32_t taken = 0;
    for (NodeId node : walk) {
      const NodeInfo& info = layout_.node(node);
      if (info.datacenter != datacenter || taken == factor) continue;
      if (racks_used.insert(info.rack).second) {
        chosen.insert(node);
        taken++;
      } else {
        skipped.push_back(node);
      }
    }
    for (size_t i = 0; i < skipped.size() && taken < factor; i++, taken++) {
      chosen.insert(skipped[i]);
    }
    CHARYBDIS_ASSERT(taken == factor);
  }
  std::vector<NodeId> replicas;
  for (NodeId node : walk) {
    if (chosen.count(node)) replicas.push_back(node);
  }
  return replicas;
}

}  // namespace charybdis
