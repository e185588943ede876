#pragma once

#include <memory>
#include <vector>

#include "core/failure_detector.h"
#include "core/shard_env.h"

namespace charybdis {

struct NodeConfig {
  NodeId id = 0;
  // Every other node of the cluster.
  std::vector<NodeId> peers;
  uint32_t shards = 1;
  FailureDetectorOptions failure_detector;
};

// One shard of a node: receives its messages and runs the services it owns.
// Shard 0 also runs the failure detector.
class Shard {
 public:
  Shard(ShardEnv env, const NodeConfig& config);
  Shard(const Shard&) = delete;
  Shard& operator=(const Shard&) = delete;

  void Start();
  // Null on shards other than 0.
  const FailureDetector* failure_detector() const { return failure_detector_.get(); }

 private:
  void OnMessage(const Envelope& message);
  void AnswerPing(const Envelope& message);

  ShardEnv env_;
  std::unique_ptr<FailureDetector> failure_detector_;
};

}  // namespace charybdis
