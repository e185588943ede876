#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/cql/schema.h"
#include "sim/health_log.h"
#include "sim/scenario_loader.h"
#include "sim/sim_buggify.h"
#include "sim/sim_network.h"
#include "sim/sim_node.h"
#include "sim/simulator.h"

namespace charybdis::sim {

// The simulated cluster of a scenario: its nodes, the network between them
// and the clients, and the fault operations a schedule can apply. Every
// applied fault is logged with its time.
class Cluster {
 public:
  // `probes` counts the rare paths the nodes reach (none when null).
  Cluster(Simulator& simulator, const LoadedScenario& scenario, Random random,
          SimBuggify& buggify, Probes* probes = nullptr);
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  // Starts the members; new nodes (Topology::new_nodes) wait for
  // StartNewNode.
  void StartAll();
  // Starts a new node, which then asks to join by itself (as `ctl cluster
  // add` starts one). No effect once it has started.
  void StartNewNode(NodeId id);
  // A client host in the given datacenter; returns its node id.
  NodeId AddClient(uint32_t datacenter);

  size_t size() const { return nodes_.size(); }
  SimNode& node(NodeId id) { return *nodes_.at(id - 1); }
  const SimNode& node(NodeId id) const { return *nodes_.at(id - 1); }
  SimNetwork& network() { return network_; }
  Simulator& simulator() { return simulator_; }
  const SimNetwork& network() const { return network_; }
  const Topology& topology() const { return topology_; }
  const std::shared_ptr<const TokenRing>& ring() const { return ring_; }
  // The topology of the longest log a running node holds (the bootstrap
  // one when none runs).
  topology::Topology NewestTopology() const;
  // Who owns what now in NewestTopology (the scenario's replication):
  // where the end-of-run checks look for a key's copies once operations
  // moved it. The static ring until an operation ran.
  std::shared_ptr<const TokenRing> OwnersRing() const;
  // Crashed or paused nodes (a new node not yet started is not counted).
  uint32_t nodes_down() const;

  void Crash(NodeId id, CrashKind kind = CrashKind::kCrash);
  // Arms a crash point on a running node: at its moment the node crashes,
  // then `point.fire` runs (no effect if the node is down).
  void ArmCrashPoint(NodeId id, CrashPoint point);
  void Restart(NodeId id);
  void Pause(NodeId id, Nanos duration);
  void Resume(NodeId id);
  // Blocks side_a -> side_b, and side_b -> side_a unless one way.
  void Partition(const std::vector<NodeId>& side_a, const std::vector<NodeId>& side_b,
                 bool one_way);
  void Heal();
  void Clog(NodeId id, Nanos duration);
  void SkewClock(NodeId id, Nanos step, int32_t drift_ppm);
  void FailDisk(NodeId id, DiskFaults faults, Nanos duration);

  const std::vector<std::string>& fault_log() const { return fault_log_; }
  // When each node was unwell (down, paused, partitioned, clogged, slow disk).
  const HealthLog& health() const { return health_; }

 private:
  void Log(const std::string& what);

  Simulator& simulator_;
  Topology topology_;
  Random random_;
  std::shared_ptr<const TokenRing> ring_;
  SimNetwork network_;
  std::vector<std::unique_ptr<SimNode>> nodes_;
  std::vector<std::string> fault_log_;
  HealthLog health_;
  std::map<NodeId, uint64_t> disk_fault_epochs_;
};

}  // namespace charybdis::sim
