#pragma once

#include <memory>
#include <vector>

#include "core/coordinator/coordinator.h"
#include "core/failure_detector.h"
#include "core/hints/hint_manager.h"
#include "core/liveness.h"
#include "core/metrics.h"
#include "core/node_config.h"
#include "core/paxos/acceptor.h"
#include "core/replica/replica.h"
#include "core/shard_env.h"
#include "core/tracing.h"

namespace charybdis {

// One shard of a node: receives its messages and runs the services it owns
// (replica, coordinator, hints). Shard 0 also runs the failure detector and
// tells the other shards of the node who is up.
class Shard {
 public:
  Shard(ShardEnv env, const NodeConfig& config);
  Shard(const Shard&) = delete;
  Shard& operator=(const Shard&) = delete;

  void Start();
  // Null on shards other than 0.
  const FailureDetector* failure_detector() const { return failure_detector_.get(); }
  const ShardMetrics& metrics() const { return metrics_; }
  const LivenessView& liveness() const { return liveness_; }

 private:
  void OnMessage(const Envelope& message);
  void AnswerPing(const Envelope& message);
  void OnLiveNodes(const std::vector<NodeId>& live);

  // Tracing wraps the world's network and storage (before env_, which
  // points at the wrappers).
  Tracer tracer_;
  TracingNetwork traced_network_;
  TracingStorage traced_storage_;
  ShardEnv env_;
  const NodeConfig& config_;
  ShardMetrics metrics_;
  LivenessView liveness_;
  Acceptor acceptor_;
  // Shard 0: the last update sent; other shards: the last one applied.
  uint64_t liveness_version_ = 0;
  Replica replica_;
  HintManager hints_;
  Coordinator coordinator_;
  std::unique_ptr<FailureDetector> failure_detector_;
};

}  // namespace charybdis
