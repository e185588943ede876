#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "core/env/address.h"
#include "core/env/time.h"

namespace charybdis::sim {

// When each node was unwell: down, paused, cut off by a partition, clogged,
// or with a failing or slow disk: anything that may make it miss an answer.
// The cluster records it as faults happen; the availability check
// (sim/availability_check.h) asks only operations whose coordinator and
// enough replicas were well throughout to succeed. Clock skew does not
// make a node unwell: it must not cost availability.
class HealthLog {
 public:
  static constexpr Nanos kOpen = std::numeric_limits<Nanos>::max();
  // Why a node is unwell until told otherwise.
  enum class Cause { kDown, kPaused, kPartitioned };

  // Unwell from `from` until Well(node, cause, ...) says otherwise.
  void Open(NodeId node, Cause cause, Nanos from);
  void Close(NodeId node, Cause cause, Nanos at);
  // Unwell over [from, until).
  void Add(NodeId node, Nanos from, Nanos until);

  // Whether `node` was well over all of [from, to], and for `recovery`
  // after each unwell spell (the cluster needs that long to see it well).
  bool WellThroughout(NodeId node, Nanos from, Nanos to, Nanos recovery) const;

 private:
  struct Spell {
    Nanos from;
    Nanos until;
  };
  std::map<NodeId, std::vector<Spell>> spells_;
  std::map<std::pair<NodeId, Cause>, size_t> open_;  // index of the open spell
};

}  // namespace charybdis::sim
