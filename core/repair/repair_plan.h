#pragma once

// What a repair on one node covers (docs/repair.md): the token ranges the
// node replicates, each with the replicas that compare it, and the tables.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/cluster/cluster_layout.h"
#include "core/topology/token_spans.h"
#include "core/topology/topology.h"
#include "proto/client.pb.h"

namespace charybdis::repair {

struct RepairRange {
  topology::TokenSpan span;
  // Every replica of the span that takes part, the repairing node first.
  std::vector<NodeId> replicas;
  bool operator==(const RepairRange&) const = default;
};

// Why `node` cannot repair by `topology` now (ok if it can): an operation
// in progress moves ranges, and a range compared among the owners now
// could be streamed from a replica that missed what the repair sends.
absl::Status CheckRepairable(const topology::Topology& topology, NodeId node);

// Whether the request's own fields hold together (its range, its
// datacenter), so that no shard starts a repair that cannot be.
absl::Status CheckRequest(const topology::Topology& topology, NodeId node, const RepairOp& request);

// The tables of `tables` (storage table -> replication) the request names.
std::map<std::string, ReplicationConfig> TablesToRepair(const std::map<std::string, ReplicationConfig>& tables,
                                                         const RepairOp& request);

// The ranges of one table's replication that `node` repairs, ascending:
// every range it replicates (or is the first replica of, for a primary
// range repair), within the request's range, among the replicas in its
// datacenter if it names one. Ranges with no other replica are left out:
// there is nothing to compare. REQUIRES: CheckRequest ok.
absl::StatusOr<std::vector<RepairRange>> RangesToRepair(const topology::Topology& topology,
                                                        const ReplicationConfig& replication, NodeId node,
                                                        const RepairOp& request);

}  // namespace charybdis::repair
