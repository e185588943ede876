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

}  // namespace charybdis::sim
