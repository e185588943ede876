#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/env/address.h"
#include "core/cluster/cluster_layout.h"
#include "proto/scenario.pb.h"

namespace charybdis::sim {

struct NodePlacement {
  NodeId id = 0;
  uint32_t datacenter = 0;  // index into Topology::datacenters
  std::string rack;
};

// A scenario's topology with nodes numbered 1..N in file order
// (datacenter by datacenter, rack by rack).
struct Topology {
  std::vector<std::string> datacenters;
  std::vector<NodePlacement> nodes;
  // Rack.new_nodes: numbered after `nodes`, not members at the start.
  std::vector<NodePlacement> new_nodes;
  uint32_t shards_per_node = 1;

  static Topology From(const scenario::Topology& topology);
  // -1 when there is no such datacenter.
  int DatacenterIndex(const std::string& name) const;
  uint32_t NodesIn(uint32_t datacenter) const;
};

// What every node knows of the scenario's cluster (its ring's input).
ClusterLayout LayoutOf(const Topology& topology, const scenario::Scenario& spec, uint64_t token_seed);

}  // namespace charybdis::sim
