#include "core/topology/placements.h"

#include "core/env/assert.h"

namespace charybdis::topology {

Placements::Placements(const TopologyLog& log, uint32_t shards_per_node)
    : log_(log), shards_per_node_(shards_per_node) {
  CHARYBDIS_ASSERT(shards_per_node_ >= 1);
}

absl::StatusOr<std::shared_ptr<const Placement>> Placements::For(const PlacedBy& placed_by) {
  const Topology& topology = log_.topology();
  CHARYBDIS_ASSERT(topology.version() >= version_);  // a log only grows
  if (topology.version() != version_) {
    placements_.clear();
    version_ = topology.version();
  }
  for (const std::shared_ptr<const Placement>& placement : placements_) {
    if (placement->replication() == placed_by.now && placement->replication_after() == placed_by.after) return placement;
  }
  if (absl::Status placeable = CheckPlaceable(topology, placed_by); !placeable.ok()) return placeable;
  auto placement = std::make_shared<const Placement>(topology, placed_by, shards_per_node_);
  CHARYBDIS_ASSERT(placement->version() == version_);
  placements_.push_back(placement);
  return placement;
}

const std::string& Placements::DatacenterOf(NodeId node) const {
  const Member* member = log_.topology().Find(node);
  CHARYBDIS_ASSERT(member != nullptr);  // members that left stay in the topology
  return member->datacenter;
}

}  // namespace charybdis::topology
