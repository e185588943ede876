#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <set>
#include <vector>

#include "core/shard.h"
#include "sim/crash_point.h"
#include "sim/node_clock.h"
#include "sim/sim_buggify.h"
#include "sim/sim_network.h"
#include "sim/sim_storage.h"
#include "sim/simulator.h"

namespace charybdis::sim {

// A simulated node: its shards' environments, built anew on every start, and
// its disks and clock, which survive crashes.
class SimNode {
 public:
  SimNode(Simulator& simulator, SimNetwork& network, SimBuggify& buggify, Probes& probes,
          NodeConfig config, uint32_t host, Random random,
          const scenario::StorageProfile& storage, NodeClock clock);
  SimNode(const SimNode&) = delete;
  SimNode& operator=(const SimNode&) = delete;
  ~SimNode();

  void Start();
  // All memory state is lost; disks keep what was synced (and, unless the
  // power was cut, maybe more). Disarms the crash point.
  void Crash(CrashKind kind = CrashKind::kCrash);
  // Arms a crash point (replacing any armed one).
  void ArmCrashPoint(CrashPoint point) { crash_point_ = std::move(point); }
  void Pause();
  void Resume();

  bool running() const { return !shards_.empty(); }
  bool paused() const { return simulator_.paused(host_); }
  NodeId id() const { return config_.id; }
  uint32_t host() const { return host_; }
  uint64_t starts() const { return starts_; }
  // Null while the node is down.
  const FailureDetector* failure_detector() const;
  // Who each shard believes is up. REQUIRES: running().
  std::vector<NodeId> LiveNodesSeenBy(ShardId shard) const;
  // The CQL schema shard 0 holds. REQUIRES: running().
  SchemaSnapshot Schema() const;
  // The topology log shard 0 holds. REQUIRES: running().
  const topology::TopologyLog& TopologyLog(ShardId shard = 0) const;
  // REQUIRES: running().
  const repair::RepairHistory& RepairHistory(ShardId shard) const;
  // The topology operation this node drives, as ctl status shows it. REQUIRES: running().
  topology::OperationDriver::Progress OperationProgress() const;
  // What this new node's join waits for (Shard::join_waiting_for). REQUIRES: running().
  std::string JoinWaitingFor() const;
  NodeClock& clock() { return clock_; }
  // The seed's rare paths, for what runs on the node's behalf (its CQL
  // connections).
  Buggify& buggify() { return buggify_; }
  const NodeClock& clock() const { return clock_; }
  const NodeConfig& config() const { return config_; }
  SimStorage& storage(ShardId shard) { return *storages_.at(shard); }
  const SimStorage& storage(ShardId shard) const { return *storages_.at(shard); }
  void set_disk_faults(DiskFaults faults);
  // A shard's metric counters over every life of the node so far.
  std::map<std::string, uint64_t> Counters(ShardId shard) const;
  // A shard's latency histograms over every life of the node so far.
  std::map<std::string, Histogram> Histograms(ShardId shard) const;

 private:
  class ShardRuntime;

  // True when the armed crash point fires at this moment.
  bool AtMoment(scenario::CrashPointFault::Point point, Envelope::BodyCase body);

  Simulator& simulator_;
  SimNetwork& network_;
  SimBuggify& buggify_;
  Probes& probes_;
  NodeConfig config_;
  uint32_t host_;
  Random random_;
  NodeClock clock_;
  uint64_t starts_ = 0;
  std::vector<std::unique_ptr<SimStorage>> storages_;
  std::vector<std::unique_ptr<ShardRuntime>> shards_;
  std::optional<CrashPoint> crash_point_;
  // Counters of the shards' earlier lives (memory is lost in a crash; the
  // report still wants the totals).
  std::vector<std::map<std::string, uint64_t>> retired_counters_;
  std::vector<std::map<std::string, Histogram>> retired_histograms_;
};

}  // namespace charybdis::sim
