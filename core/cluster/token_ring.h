#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/cluster/cluster_layout.h"
#include "core/data/token.h"

namespace charybdis {

// The token ring: every node's vnode tokens, and for each token range the
// replicas that own it under the layout's replication strategy.
//
// A token belongs to the range ending at the first vnode token >= it
// (wrapping around); its natural replicas are found walking the ring from
// there: SimpleStrategy takes the first RF distinct nodes;
// NetworkTopologyStrategy takes, per datacenter, nodes of racks not yet used
// first and then, once every rack has a replica, the nodes it skipped, in
// ring order (Cassandra's algorithm). Replicas are listed in ring-walk order;
// the first is the primary replica.
class TokenRing {
 public:
  // Each node's tokens as DrawVnodeTokens draws them.
  explicit TokenRing(const ClusterLayout& layout);
  // The tokens given: every node of the layout has at least one, no token
  // is anyone else's (core/topology/ keeps them).
  TokenRing(const ClusterLayout& layout, const std::map<NodeId, std::vector<Token>>& tokens);

  const std::vector<NodeId>& ReplicasOf(Token token) const;
  NodeId PrimaryReplicaOf(Token token) const { return ReplicasOf(token).front(); }
  // Replication factor summed over datacenters.
  uint32_t total_replication_factor() const { return total_replication_factor_; }
  // 0 for a datacenter without replicas (or for every datacenter under
  // SimpleStrategy).
  uint32_t ReplicationFactorIn(const std::string& datacenter) const;

  struct VnodeToken {
    Token token;
    NodeId node;
  };
  const std::vector<VnodeToken>& tokens() const { return tokens_; }
  const ClusterLayout& layout() const { return layout_; }

 private:
  void Place();
  std::vector<NodeId> WalkSimple(size_t start) const;
  std::vector<NodeId> WalkNetworkTopology(size_t start) const;

  ClusterLayout layout_;
  uint32_t total_replication_factor_ = 0;
  std::vector<VnodeToken> tokens_;                 // sorted by token
  std::vector<std::vector<NodeId>> replicas_;      // per entry of tokens_
};

// The share of the token space each node replicates, 0 to 1, as
// nodetool status's "Owns (effective)": summed over nodes, the
// replication factor.
std::map<NodeId, double> EffectiveOwnership(const TokenRing& ring);

// The vnode tokens of the layout's nodes: a function of the token seed and
// the node ids, so every node computes every other's. A node that joins
// later draws its own with DrawTokensOfNewNode.
std::map<NodeId, std::vector<Token>> DrawVnodeTokens(const ClusterLayout& layout);
// `count` tokens for node `node`, none of them in `taken`, drawn from the
// seed and the id as DrawVnodeTokens draws a layout's.
std::vector<Token> DrawTokensOfNewNode(uint64_t token_seed, NodeId node, uint32_t count, const std::set<Token>& taken);

}  // namespace charybdis
