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

// How a storage table is replicated, as its schema says: by its keyspace's
// replication (keyspace and the schema log entry that created it name
// that keyspace's life), or by the cluster's (keyspace empty). A change
// of a keyspace's replication is a topology operation, which places the
// keyspace's tables until every schema holds the change
// (core/topology/placements.h).
struct TableReplication {
  std::string keyspace;
  uint64_t keyspace_created_at = 0;
  ReplicationConfig replication;
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
