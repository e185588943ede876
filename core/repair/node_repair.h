#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "core/cluster/cluster_layout.h"
#include "core/env/shard_env.h"
#include "core/topology/topology_log.h"
#include "proto/messages.pb.h"

namespace charybdis::repair {

// `ctl repair` on a node (docs/repair.md), run by its shard 0: once the
// node's topology is current and no operation is in progress, asks every
// shard to repair its part of the node's ranges (range_repair.h), and
// answers the client with the summed summary once all did, or with the
// first shard's reason to stop. One repair at a time.
class NodeRepair {
 public:
  using Tables = std::function<std::map<std::string, ReplicationConfig>()>;
  // `current`: whether the node serves by a topology as long as its peers'.
  NodeRepair(ShardEnv env, uint32_t shards, const topology::TopologyLog& log, Tables tables,
             std::function<bool()> current);
  NodeRepair(const NodeRepair&) = delete;
  NodeRepair& operator=(const NodeRepair&) = delete;

  // A client's RepairOp.
  void OnRequest(const Envelope& message);
  // A shard's ShardRepairDone.
  void OnShardDone(const Envelope& message);

 private:
  struct Running {
    Address client;
    uint64_t client_request_id = 0;
    uint64_t id = 0;  // of the ShardRepair requests
    std::set<ShardId> waiting;
    RepairSummary summary;
    std::string error;  // the first shard's that stopped
  };
  // Why the request cannot run now (ok if it can), and with which code.
  absl::Status Refusal(const RepairOp& request) const;

  ShardEnv env_;
  const uint32_t shards_;
  const topology::TopologyLog& log_;
  Tables tables_;
  std::function<bool()> current_;
  uint64_t last_id_ = 0;
  std::optional<Running> running_;
};

}  // namespace charybdis::repair
