#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "core/env/shard_env.h"

namespace charybdis {

struct FailureDetectorOptions {
  Nanos heartbeat_interval = 200 * kMillisecond;
  Nanos convict_after = 1000 * kMillisecond;
};

// Heartbeats between nodes and this node's view of who is up. Runs on shard
// 0 of every node (as gossip does in ScyllaDB).
//
// On start it bumps the node's generation durably, so peers can tell a
// restarted node from late messages of its previous life. A peer is up from
// the first heartbeat of its current generation until it goes unheard for
// convict_after, counted in this node's heartbeat rounds.
class FailureDetector {
 public:
  // `on_change` gets the new LiveNodes() whenever they change.
  using OnChange = std::function<void(const std::vector<NodeId>& live)>;
  // Adds what else the node tells its peers (its schema) to a heartbeat.
  using Stamp = std::function<void(Heartbeat&)>;

  FailureDetector(ShardEnv env, std::vector<NodeId> peers, FailureDetectorOptions options,
                  OnChange on_change, Stamp stamp);
  FailureDetector(const FailureDetector&) = delete;
  FailureDetector& operator=(const FailureDetector&) = delete;

  void Start();
  // A heartbeat from a peer, or from a node that is not one yet (a new
  // node reading the logs before it joins): a stranger is answered with a
  // heartbeat of ours, so it learns what we hold, and is not watched.
  void OnHeartbeat(NodeId from, const Heartbeat& heartbeat);
  // Watches `node` from now on (a member the topology log added); once
  // watched, a node stays watched.
  void AddPeer(NodeId node);

  bool IsUp(NodeId node) const;
  // Whether `node` is down as far as this detector can tell: convicted, or
  // unheard for convict_after worth of its rounds since it began to watch
  // it. Just after a start every peer is unheard, not down; and rounds, not
  // the clock, measure it, as for conviction: a clock stepped forward must
  // not let every peer go at once.
  bool HeldDown(NodeId node) const;
  // Every node this one sees as up, itself included once started.
  std::vector<NodeId> LiveNodes() const;
  // 0 until the bumped generation is durable.
  uint64_t generation() const { return generation_; }

  static constexpr const char* kGenerationKey = "system/generation";

 private:
  struct Peer {
    uint64_t generation = 0;
    uint64_t last_heard_tick = 0;
    uint64_t watched_since_tick = 0;
    bool up = false;
  };

  void BumpGeneration();
  void OnGenerationRead(absl::StatusOr<std::optional<std::string>> stored);
  void Tick();
  void SendHeartbeats();
  void SendHeartbeat(NodeId to);
  void ConvictSilentPeers();
  void NotifyIfChanged();

  ShardEnv env_;
  FailureDetectorOptions options_;
  OnChange on_change_;
  Stamp stamp_;
  std::vector<NodeId> last_reported_;
  std::map<NodeId, Peer> peers_;
  uint64_t generation_ = 0;
  uint64_t sequence_ = 0;
  uint64_t ticks_ = 0;  // heartbeat rounds since start
  bool skipped_last_round_ = false;
};

}  // namespace charybdis
