#pragma once

// A keyspace's replication, from CREATE KEYSPACE's map to the ring's
// ReplicationConfig: SimpleStrategy with a replication_factor, or
// NetworkTopologyStrategy with a factor per datacenter (docs/cql.md,
// "Replication per keyspace").

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "core/cluster/cluster_layout.h"

namespace charybdis::cql {

// A cluster's datacenters and how many nodes each has: what a keyspace's
// replication is checked against.
using Datacenters = std::map<std::string, uint32_t>;
Datacenters DatacentersOf(const ClusterLayout& layout);

// The replication map a keyspace keeps (system_schema.keyspaces shows
// it), from the one CREATE KEYSPACE gave: "class" becomes the strategy's
// full name, and NetworkTopologyStrategy's replication_factor stands for
// every datacenter of `datacenters`, as in Cassandra 4. Refused
// (kFailedPrecondition, CQL's ConfigurationError): unknown options,
// factors that are not whole numbers, and no replica at all. Whether the
// cluster has the datacenters and nodes is CheckFits'.
absl::StatusOr<std::map<std::string, std::string>> CheckedReplication(const std::string& keyspace,
                                                                      std::map<std::string, std::string> options,
                                                                      const Datacenters& datacenters);

// REQUIRES: `replication` came from CheckedReplication.
ReplicationConfig ReplicationConfigOf(const std::map<std::string, std::string>& replication);

// Whether the cluster, of `datacenters`, can hold `replication` (from
// CheckedReplication): every datacenter named is one of them, with at
// least its factor's nodes (SimpleStrategy: the cluster's). Checked when a
// schema change is proposed, against the topology then (nodes join and
// leave), never when an entry is applied, which must come out alike on
// every node whatever its topology (docs/cql.md).
absl::Status CheckFits(const std::string& keyspace, const std::map<std::string, std::string>& replication,
                       const Datacenters& datacenters);

// Whether the ring replicates a keyspace of this class (not the system
// keyspaces' LocalStrategy, which each node serves from itself).
bool IsReplicatedStrategy(const std::string& strategy_class);

}  // namespace charybdis::cql
