#include "sim/topology.h"

namespace charybdis::sim {

Topology Topology::From(const scenario::Topology& topology) {
  Topology result;
  result.shards_per_node = topology.shards_per_node();
  NodeId next = 1;
  for (const auto& datacenter : topology.datacenter()) {
    const auto index = static_cast<uint32_t>(result.datacenters.size());
    result.datacenters.push_back(datacenter.name());
    for (const auto& rack : datacenter.rack()) {
      for (uint32_t i = 0; i < rack.nodes(); i++) {
        result.nodes.push_back(NodePlacement{next++, index, rack.name()});
      }
    }
  }
  for (const auto& datacenter : topology.datacenter()) {
    const auto index = static_cast<uint32_t>(result.DatacenterIndex(datacenter.name()));
    for (const auto& rack : datacenter.rack()) {
      for (uint32_t i = 0; i < rack.new_nodes(); i++) {
        result.new_nodes.push_back(NodePlacement{next++, index, rack.name()});
      }
    }
  }
  return result;
}

int Topology::DatacenterIndex(const std::string& name) const {
  for (size_t i = 0; i < datacenters.size(); i++) {
    if (datacenters[i] == name) return static_cast<int>(i);
  }
  return -1;
}

uint32_t Topology::NodesIn(uint32_t datacenter) const {
  uint32_t count = 0;
  for (const auto& node : nodes) count += node.datacenter == datacenter;
  return count;
}

ClusterLayout LayoutOf(const Topology& topology, const scenario::Scenario& spec, uint64_t token_seed) {
  ClusterLayout layout;
  for (const NodePlacement& placement : topology.nodes) {
    layout.nodes.push_back(
        NodeInfo{placement.id, topology.datacenters[placement.datacenter], placement.rack});
  }
  layout.shards_per_node = topology.shards_per_node;
  if (spec.topology().vnodes_per_node()) layout.vnodes_per_node = spec.topology().vnodes_per_node();
  layout.token_seed = token_seed;
  const auto& replication = spec.topology().replication();
  if (replication.strategy() == scenario::Replication::SIMPLE) {
    layout.replication.strategy = ReplicationConfig::Strategy::kSimple;
    layout.replication.replication_factor = replication.replication_factor();
  } else {
    for (const auto& datacenter : replication.datacenter()) {
      layout.replication.per_datacenter[datacenter.name()] = datacenter.replication_factor();
    }
  }
  return layout;
}

}  // namespace charybdis::sim
