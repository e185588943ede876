#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "core/topology/placement.h"
#include "core/topology/topology_log.h"

namespace charybdis::topology {

// The placements of a shard's topology log at its latest version, one per
// replication in use, made when first asked for. The data path asks here
// for every request, so a request routes by the newest version its shard
// holds; the Placement it got is shared and outlives a newer version.
class Placements {
 public:
  Placements(const TopologyLog& log, uint32_t shards_per_node);

  // Refused when the topology cannot hold the replication: fewer owners in
  // a datacenter than its factor (a keyspace created while a decommission
  // was being agreed; docs/topology.md). The request is then Unavailable.
  absl::StatusOr<std::shared_ptr<const Placement>> For(const PlacedBy& placed_by);
  // A table's, as PlacedByOf says.
  absl::StatusOr<std::shared_ptr<const Placement>> For(const TableReplication& table) {
    return For(PlacedByOf(log_.topology(), table));
  }
  // A member's datacenter, of any member the log ever had.
  const std::string& DatacenterOf(NodeId node) const;
  const Topology& topology() const { return log_.topology(); }

 private:
  const TopologyLog& log_;
  const uint32_t shards_per_node_;
  uint64_t version_ = 0;  // of placements_
  std::vector<std::shared_ptr<const Placement>> placements_;  // a handful: one per replication in use
};

}  // namespace charybdis::topology
