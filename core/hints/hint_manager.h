#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "core/cluster/liveness.h"
#include "core/telemetry/metrics.h"
#include "core/cluster/node_config.h"
#include "core/env/shard_env.h"

namespace charybdis {

// Hinted handoff on one coordinator shard: mutations a replica missed,
// stored durably in the shard's storage per target replica and replayed
// when the failure detector sees the target up again.
//
// Replay sends the stored mutation with its original timestamps, so a hint
// delivered twice changes nothing; a hint is deleted only once the target
// acknowledged it. At most hint_replay_parallelism hints per target are in
// flight at once.
//
// Stored as  'h' be32(target) be64(sequence) -> PartitionData.
class HintManager {
 public:
  // `has_left`: whether a node left the cluster for good (the topology
  // says `left`); its hints are dropped (docs/topology.md).
  HintManager(ShardEnv env, const NodeConfig& config, LivenessView& liveness, ShardMetrics& metrics,
              std::function<bool(NodeId)> has_left);
  HintManager(const HintManager&) = delete;
  HintManager& operator=(const HintManager&) = delete;

  // Learns what earlier lives of the shard stored, then replays as targets
  // come up.
  void Start();
  // Stores a hint unless the target has been down longer than the hint
  // window (then the hint is dropped). `done(true)` once it is durable.
  void Store(NodeId target, const PartitionData& mutation, std::function<void(bool)> done);
  void OnTargetUp(NodeId target);
  void OnAck(NodeId from, uint64_t request_id, bool ok);

  // Replay requests carry ids with the top bit set, to tell their acks
  // from the coordinator's.
  static bool IsHintRequest(uint64_t request_id) { return request_id >> 63; }
  // The prefix of every stored hint's key.
  static std::string KeyPrefix();

 private:
  struct Replay {
    bool scanning = false;
    std::map<uint64_t, std::string> in_flight;  // request id -> hint key
    std::set<std::string> sent;                 // keys in flight
  };

  void Tick();
  void ReplayTo(NodeId target);
  void OnScanned(NodeId target, uint64_t stored_before,
                 absl::StatusOr<std::vector<KeyValue>> hints);
  void Send(NodeId target, const KeyValue& hint);
  // Deletes every hint for a target that left, and counts them dropped.
  void Excise(NodeId target);
  void OnReplayTimeout(NodeId target, uint64_t request_id);

  ShardEnv env_;
  const NodeConfig& config_;
  LivenessView& liveness_;
  ShardMetrics& metrics_;
  const std::function<bool(NodeId)> has_left_;
  bool started_ = false;
  uint64_t next_sequence_ = 1;
  const uint64_t request_id_base_;
  uint64_t last_request_id_ = 0;
  std::set<NodeId> targets_;  // may have hints stored
  std::map<NodeId, uint64_t> stored_for_;  // hints stored per target, this life
  std::map<NodeId, Replay> replays_;
  std::set<NodeId> excising_;
};

}  // namespace charybdis
