#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/env/address.h"

namespace charybdis {

struct NodeInfo {
  NodeId id = 0;
  std::string datacenter;
  std::string rack;
};

struct ReplicationConfig {
  enum class Strategy { kSimple, kNetworkTopology };
  Strategy strategy = Strategy::kNetworkTopology;
  // SimpleStrategy: replicas in the cluster.
  uint32_t replication_factor = 0;
  // NetworkTopologyStrategy: replicas per datacenter (ordered: iteration
  // order must not depend on the run).
  std::map<std::string, uint32_t> per_datacenter;

  bool operator==(const ReplicationConfig&) const = default;
};

// What every node knows of the cluster's shape: its nodes, how many shards
// each runs, how many tokens each owns and how data is replicated. Static:
// the data path still runs on one layout; core/topology/ holds the
// versions of a changing membership (docs/topology.md).
struct ClusterLayout {
  std::vector<NodeInfo> nodes;  // by id order
  uint32_t shards_per_node = 1;
  uint32_t vnodes_per_node = 16;
  // Seeds the nodes' vnode tokens (the same on every node).
  uint64_t token_seed = 0;
  ReplicationConfig replication;

  const NodeInfo& node(NodeId id) const;
  const NodeInfo* Find(NodeId id) const;  // nullptr when not a node of the layout
};

}  // namespace charybdis
