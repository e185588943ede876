#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "core/cluster/cluster_layout.h"
#include "core/topology/token_spans.h"
#include "core/topology/topology.h"

namespace charybdis::topology {

// Whether `node` may clean up now: refused while an operation is in
// progress (its pending replicas are gaining ranges they do not own yet,
// by streams and by writes, and a node that removed them would lose what
// it was sent; Cassandra and ScyllaDB refuse cleanup then too), and for a
// node that is not a normal member.
absl::Status CheckCleanable(const Topology& topology, NodeId node);

// What `ctl cleanup` may remove from `node` for one replication
// (docs/topology.md "Cleanup"): the token ranges it does not replicate,
// ascending and merged. Refused as CheckCleanable refuses.
absl::StatusOr<std::vector<TokenSpan>> SpansToCleanUp(const Topology& topology, const ReplicationConfig& replication,
                                                     NodeId node);

}  // namespace charybdis::topology
