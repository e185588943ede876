#pragma once

#include <functional>
#include <vector>

#include "proto/messages.pb.h"

namespace charybdis::topology {

// Client requests that reach a shard before its topology is current
// (docs/topology.md, "A node that starts"). A restarted node loads its own
// copy of the topology log, which may be older than the cluster's, and a
// shard other than 0 holds only the bootstrap topology until shard 0 tells
// it the log. Routing by either sends reads, writes and Paxos rounds to the
// replicas of an older version, and an LWT among the old owners of a range
// can miss what its new owners decided (join_faults seed 439: a serial
// round at a shard still on the bootstrap ring just after a power cut).
// So they wait here until shard 0 says the node holds the log as long as
// its peers do, then run in the order they came.
class HeldUntilCurrent {
 public:
  explicit HeldUntilCurrent(std::function<void(const Envelope&)> dispatch);
  HeldUntilCurrent(const HeldUntilCurrent&) = delete;
  HeldUntilCurrent& operator=(const HeldUntilCurrent&) = delete;

  // Runs a client request now if the topology is current, else holds it.
  void Take(const Envelope& message);
  // From now on the topology is current (for this life): runs what was held.
  void BecomeCurrent();
  bool current() const { return current_; }

 private:
  std::function<void(const Envelope&)> dispatch_;
  bool current_ = false;
  std::vector<Envelope> held_;  // in arrival order
};

}  // namespace charybdis::topology
