#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>

#include "core/env/shard_env.h"
#include "core/topology/topology_log.h"
#include "proto/messages.pb.h"

namespace charybdis::topology {

// `ctl cleanup` on a node (docs/topology.md "Cleanup"), run by its shard
// 0: once the node's topology is current and no operation is in progress,
// asks every shard to remove what the node does not replicate at this
// version (core/replica/range_cleanup.h), and answers the client with the
// pairs and bytes removed once all did, or with the first shard's reason
// to stop. One cleanup at a time.
class NodeCleanup {
 public:
  // `current`: whether the node serves by a topology as long as its peers'.
  NodeCleanup(ShardEnv env, uint32_t shards, const TopologyLog& log, std::function<bool()> current);
  NodeCleanup(const NodeCleanup&) = delete;
  NodeCleanup& operator=(const NodeCleanup&) = delete;

  // A client's CleanupOp.
  void OnRequest(const Envelope& message);
  // A shard's ShardCleanupDone.
  void OnShardDone(const Envelope& message);

 private:
  struct Running {
    Address client;
    uint64_t client_request_id = 0;
    uint64_t id = 0;  // of the ShardCleanup requests
    std::set<ShardId> waiting;
    uint64_t pairs = 0;
    uint64_t bytes = 0;
    std::string error;  // the first shard's that stopped
  };

  ShardEnv env_;
  const uint32_t shards_;
  const TopologyLog& log_;
  std::function<bool()> current_;
  uint64_t last_id_ = 0;
  std::optional<Running> running_;
};

}  // namespace charybdis::topology
