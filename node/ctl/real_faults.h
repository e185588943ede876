#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/env/random.h"
#include "node/local/local_cluster.h"
#include "proto/scenario.pb.h"

namespace charybdis::node {

// A scenario's fault schedule (scripted actions and random faults) mapped
// onto real actions against a local cluster: crash = SIGKILL, restart =
// start the process again, partition = the nodes drop each other's
// traffic (both ways), heal, pause = SIGSTOP then SIGCONT. Clogs, disk
// faults, clock skews, loss and duplication have no real counterpart here
// and are counted as skipped. Random faults take at most one node down at
// a time (unless max_nodes_down says more), so a quorum of RF=3 stays up.
class RealFaults {
 public:
  RealFaults(const scenario::Scenario& spec, LocalCluster& cluster, Random random);
  ~RealFaults();

  // Runs the schedule on its own thread, times relative to now.
  void Start();
  // Waits for the schedule to end, then heals: partitions healed, paused
  // nodes resumed, crashed nodes started again.
  void FinishAndHeal();

  uint64_t applied() const { return applied_; }
  uint64_t skipped() const { return skipped_; }
  std::string Summary() const;

 private:
  struct Event {
    uint64_t at_ms;
    std::string what;
    std::function<void()> act;
  };
  void Add(uint64_t at_ms, std::string what, std::function<void()> act);
  // SIGSTOP at `at_ms`, SIGCONT `length_ms` later.
  void AddPause(uint64_t at_ms, NodeId node, uint64_t length_ms);
  void AddScripted(const scenario::FaultAction& action);
  void AddRandom(const scenario::RandomFaults& faults, Random& random);
  void Run();
  // SIGKILL; a power cut also drops what the node had not fsync'd.
  void Crash(NodeId node, bool power_cut);
  void Restart(NodeId node);
  void Partition(const std::vector<NodeId>& a, const std::vector<NodeId>& b);

  LocalCluster& cluster_;
  std::multimap<uint64_t, Event> events_;
  std::map<std::string, uint64_t> counts_;
  std::set<NodeId> crashed_;
  std::atomic<uint64_t> applied_{0};
  uint64_t skipped_ = 0;
  std::thread thread_;
};

}  // namespace charybdis::node
