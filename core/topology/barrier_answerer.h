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
// for a version and asks the node's other shards. Each shard, once its own
// log holds the version, waits `drain` (the coordinators' write timeout,
// so that writes it began under an older version have ended), then raises
// its fence to the version (its replica refuses writes routed by an older
// one) and confirms. When every shard has, shard 0 answers the driver. A
// shard 0 behind the version asks its agent to read the log.
class BarrierAnswerer {
 public:
  // `fence`: the shard's, read by its replica.
  BarrierAnswerer(ShardEnv env, uint32_t shards, const TopologyLog& log, Nanos drain, uint64_t& fence,
                  std::function<void()> catch_up);
  BarrierAnswerer(const BarrierAnswerer&) = delete;
  BarrierAnswerer& operator=(const BarrierAnswerer&) = delete;

  void OnBarrier(const Envelope& message);
  // Shard 0: another shard of this node has raised its fence.
  void OnShardDone(const Envelope& message);
  // This shard's log grew.
  void OnTopologyChange();

 private:
  // Shard 0: a driver's request, and which of the node's shards have
  // raised their fence to its version so far.
  struct Asked {
    Address driver;
    uint64_t request_id = 0;
    uint64_t version = 0;
    std::set<ShardId> fenced;
  };
  // Drains, then raises the fence to each version this shard holds that
  // it was asked about; then `Fenced`.
  void DrainHeld();
  void Fenced(uint64_t version);
  void AnswerDrivers();

  ShardEnv env_;
  const uint32_t shards_;
  const TopologyLog& log_;
  const Nanos drain_;
  uint64_t& fence_;
  std::function<void()> catch_up_;
  uint64_t last_id_ = 0;
  std::map<uint64_t, Asked> asked_;  // shard 0, by local id
  // Versions asked about and not yet drained (with shard 0's request ids
  // on other shards), and those draining now.
  std::map<uint64_t, std::set<uint64_t>> waiting_;
  std::set<uint64_t> draining_;
};

}  // namespace charybdis::topology
