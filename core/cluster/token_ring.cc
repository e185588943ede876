#include "core/cluster/token_ring.h"

#include <algorithm>
#include <set>

#include "core/env/assert.h"
#include "core/env/random.h"

namespace charybdis {

const NodeInfo* ClusterLayout::Find(NodeId id) const {
  // By id order; ids have gaps once nodes have left (core/topology/).
  auto it = std::lower_bound(nodes.begin(), nodes.end(), id, [](const NodeInfo& info, NodeId wanted) { return info.id < wanted; });
  return it != nodes.end() && it->id == id ? &*it : nullptr;
}

const NodeInfo& ClusterLayout::node(NodeId id) const {
  const NodeInfo* found = Find(id);
  CHARYBDIS_ASSERT(found != nullptr);
  return *found;
}

std::vector<Token> DrawTokensOfNewNode(uint64_t token_seed, NodeId node, uint32_t count, const std::set<Token>& taken) {
  Random random(Mix64(token_seed ^ Mix64(node)));
  std::set<Token> drawn;
  std::vector<Token> tokens;
  for (uint32_t i = 0; i < count; i++) {
    Token token;
    do {
      token = static_cast<Token>(random.Next());
    } while (token == kMinimumToken || taken.count(token) || !drawn.insert(token).second);
    tokens.push_back(token);
  }
  CHARYBDIS_ASSERT(tokens.size() == count);
  return tokens;
}

std::map<NodeId, std::vector<Token>> DrawVnodeTokens(const ClusterLayout& layout) {
  CHARYBDIS_ASSERT(layout.vnodes_per_node >= 1);
  std::map<NodeId, std::vector<Token>> tokens;
  std::set<Token> used;  // in node order: a later node redraws what an earlier one holds
  for (const NodeInfo& node : layout.nodes) {
    tokens[node.id] = DrawTokensOfNewNode(layout.token_seed, node.id, layout.vnodes_per_node, used);
    used.insert(tokens[node.id].begin(), tokens[node.id].end());
  }
  return tokens;
}

TokenRing::TokenRing(const ClusterLayout& layout) : TokenRing(layout, DrawVnodeTokens(layout)) {}

TokenRing::TokenRing(const ClusterLayout& layout, const std::map<NodeId, std::vector<Token>>& tokens)
    : layout_(layout) {
  CHARYBDIS_ASSERT(!layout.nodes.empty());
  CHARYBDIS_ASSERT(tokens.size() == layout.nodes.size());
  for (const auto& [node, owned] : tokens) {
    CHARYBDIS_ASSERT(!owned.empty());
    CHARYBDIS_ASSERT(layout.node(node).id == node);
    for (Token token : owned) tokens_.push_back(VnodeToken{token, node});
  }
  std::sort(tokens_.begin(), tokens_.end(),
            [](const VnodeToken& a, const VnodeToken& b) { return a.token < b.token; });
  for (size_t i = 1; i < tokens_.size(); i++) CHARYBDIS_ASSERT(tokens_[i - 1].token < tokens_[i].token);
  Place();
}

void TokenRing::Place() {
  const ReplicationConfig& replication = layout_.replication;
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

std::map<NodeId, double> EffectiveOwnership(const TokenRing& ring) {
  const auto& tokens = ring.tokens();
  CHARYBDIS_ASSERT(!tokens.empty());
  std::map<NodeId, long double> shares;
  for (const NodeInfo& node : ring.layout().nodes) shares[node.id] = 0;
  for (size_t i = 0; i < tokens.size(); i++) {
    // Vnode i's range: from its predecessor's token (exclusive) to its own;
    // unsigned arithmetic wraps around the ring's end, and one vnode alone
    // owns everything.
    const Token previous = tokens[(i + tokens.size() - 1) % tokens.size()].token;
    const uint64_t width = static_cast<uint64_t>(tokens[i].token) - static_cast<uint64_t>(previous);
    const long double share = (tokens.size() == 1 ? 18446744073709551616.0L : static_cast<long double>(width)) /
                              18446744073709551616.0L;
    for (NodeId replica : ring.ReplicasOf(tokens[i].token)) shares[replica] += share;
  }
  std::map<NodeId, double> ownership;
  long double total = 0;
  for (const auto& [node, share] : shares) {
    ownership[node] = static_cast<double>(share);
    total += share;
  }
  CHARYBDIS_ASSERT(total > ring.total_replication_factor() - 1e-6L && total < ring.total_replication_factor() + 1e-6L);
  return ownership;
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
