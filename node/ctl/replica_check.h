#pragma once

#include <string>

#include "core/cluster/token_ring.h"
#include "node/local/local_cluster.h"

namespace charybdis::node {

struct ReplicaCheck {
  bool passed = false;
  std::string detail;
};

// Reads every node's RocksDB directories directly (the cluster must be
// stopped) and checks that all replicas of each key k0..k{keys-1} of
// `table` hold the same partition, tombstones included.
ReplicaCheck CheckReplicasConverge(const LocalCluster& cluster, const TokenRing& ring,
                                   const std::string& table, uint32_t keys);

}  // namespace charybdis::node
