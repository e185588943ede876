#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>

#include "core/env/shard_env.h"
#include "core/topology/topology_log.h"
#include "proto/messages.pb.h"

namespace charybdis::topology {

// A node's side of an operation's barrier (docs/topology.md "Fencing and
// the barrier"), one per shard. Shard 0 takes a driver's TopologyBarrier
// for a version and asks the node's other shards; each answers once its
// own log holds that version. When every shard holds it, shard 0 waits
// `drain` (the coordinators' longest request timeout, so that requests
// begun under an older version have ended) and answers the driver. A
// shard 0 behind the version asks its agent to read the log.
class BarrierAnswerer {
 public:
  BarrierAnswerer(ShardEnv env, uint32_t shards, const TopologyLog& log, Nanos drain,
                  std::function<void()> catch_up);
  BarrierAnswerer(const BarrierAnswerer&) = delete;
  BarrierAnswerer& operator=(const BarrierAnswerer&) = delete;

  void OnBarrier(const Envelope& message);
  // Shard 0: another shard of this node holds the version.
  void OnShardDone(const Envelope& message);
  // This shard's log grew.
  void OnTopologyChange();

 private:
  // Shard 0: a driver's request, and which of the node's shards hold its
  // version so far.
  struct Asked {
    Address driver;
    uint64_t request_id = 0;
    uint64_t version = 0;
    std::set<ShardId> holding;
    bool draining = false;
  };
  void AnswerHeld();
  void Drained(uint64_t asked_id);

  ShardEnv env_;
  const uint32_t shards_;
  const TopologyLog& log_;
  const Nanos drain_;
  std::function<void()> catch_up_;
  uint64_t last_id_ = 0;
  std::map<uint64_t, Asked> asked_;  // shard 0, by local id
  // Other shards: the versions shard 0 asked about, with its request ids.
  std::map<uint64_t, std::set<uint64_t>> waiting_;  // version -> request ids
};

}  // namespace charybdis::topology
