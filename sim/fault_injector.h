#pragma once

#include <set>
#include <string>

#include "core/env/random.h"
#include "proto/scenario.pb.h"
#include "sim/cluster.h"

namespace charybdis::sim {

// The faults of one seed's world: which random kinds are on and how often
// (swarm testing: each seed draws its own mix).
struct FaultWorld {
  double crashes_per_minute = 0;
  double partitions_per_minute = 0;
  double clogs_per_minute = 0;
  double pauses_per_minute = 0;
  double disk_faults_per_minute = 0;
  double clock_skews_per_minute = 0;
  double crash_points_per_minute = 0;
  // The share of random crashes and crash points that cut the power.
  double power_cut_fraction = 0;
  MessageFaults messages;

  std::string ToString() const;
};

// Applies a scenario's fault schedule and, between random_faults.start_ms
// and end_ms, the random faults of the seed's world. At end_ms every random
// fault heals: partitions and clogs end, crashed nodes restart, paused nodes
// resume, disks and message rates return to normal. Clock skews stay.
class FaultInjector {
 public:
  FaultInjector(Simulator& simulator, Cluster& cluster, const scenario::Scenario& spec,
                Random random);

  void Schedule();
  // From then on no fault is active (the checks may expect a healed cluster).
  Nanos quiet_from() const { return quiet_from_; }
  // Moments (of their kind) that scripted crash points saw, the one that
  // fired included.
  uint64_t crash_point_moments() const { return crash_point_moments_; }
  const FaultWorld& world() const { return world_; }
  // Every fault that happened, scripted or random, as a scripted schedule
  // (to the millisecond): what --shrink starts from.
  const scenario::FaultSchedule& happened() const { return happened_; }

 private:
  void ScheduleAction(const scenario::FaultAction& action);
  void Apply(const scenario::FaultAction& action);
  void ScheduleRandom();
  // Calls `fault` at the arrivals of a Poisson process of the given rate.
  void Arrivals(double per_minute, uint64_t detail, std::function<void()> fault);
  void RandomCrash();
  void RandomCrashPoint();
  CrashKind DrawCrashKind();
  // Restarts a randomly crashed node after a random downtime (or at the
  // end of the random faults).
  void ScheduleRandomRestart(NodeId id);
  void ArmScriptedCrashPoint(const scenario::CrashPointFault& spec);
  void RandomPartition();
  void RandomClog();
  void RandomPause();
  void RandomDiskFault();
  void RandomClockSkew();
  void EndRandomFaults();
  // A node that is running and not paused, or 0 if none may go down now.
  NodeId PickNodeToTakeDown();
  Nanos DrawDuration(uint64_t max_ms);
  // Adds a random fault, happening now, to happened_.
  scenario::FaultAction& Record();

  Simulator& simulator_;
  Cluster& cluster_;
  const scenario::Scenario& spec_;
  Random random_;
  FaultWorld world_;
  uint32_t max_nodes_down_ = 0;
  Nanos random_end_ = 0;
  Nanos quiet_from_ = 0;
  uint64_t crash_point_moments_ = 0;
  std::set<NodeId> crashed_at_random_;
  scenario::FaultSchedule happened_;
};

}  // namespace charybdis::sim
