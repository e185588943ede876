#pragma once

#include <string>

#include "absl/status/statusor.h"

#include "core/cluster/token_ring.h"
#include "node/local/local_cluster.h"

namespace charybdis::node {

struct ReplicaCheck {
  bool passed = false;
  std::string detail;
};

// Who owns what now, as the first running node of `cluster` that answers
// its status says (the topology log's owners, their racks and tokens),
// under `replication`: where replicas are looked for once operations moved
// ranges.
absl::StatusOr<TokenRing> OwnersRingOf(const LocalCluster& cluster, const ReplicationConfig& replication,
                                       uint32_t shards);

// Reads every node's RocksDB directories directly (the cluster must be
// stopped) and checks that all replicas of each key k0..k{keys-1} of
// `table` hold the same partition, tombstones included.
ReplicaCheck CheckReplicasConverge(const LocalCluster& cluster, const TokenRing& ring,
                                   const std::string& table, uint32_t keys);

}  // namespace charybdis::node
