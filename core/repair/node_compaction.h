#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/env/shard_env.h"
#include "proto/messages.pb.h"

namespace charybdis::repair {

// `ctl compact` on a node (docs/repair.md, "Tombstone GC"), run by its
// shard 0: asks every shard to purge what its tables' tombstone GC allows
// (shard_compaction.h), and answers the client with the pairs and bytes
// deleted once all did, or with the first shard's reason to stop. One
// compaction at a time. The node also runs one of every table on its own
// every `interval`, as background compactions purge in ScyllaDB.
class NodeCompaction {
 public:
  // The storage tables a CompactOp names (none: it names no table).
  using Tables = std::function<std::vector<std::string>(const CompactOp&)>;
  NodeCompaction(ShardEnv env, uint32_t shards, Tables tables, Nanos interval);
  NodeCompaction(const NodeCompaction&) = delete;
  NodeCompaction& operator=(const NodeCompaction&) = delete;

  // Starts the compactions of its own.
  void Start();

  // A client's CompactOp.
  void OnRequest(const Envelope& message);
  // A shard's ShardCompactDone.
  void OnShardDone(const Envelope& message);

 private:
  // A compaction of every table, `client` its asker (none: the node's own).
  void Run(std::optional<Address> client, uint64_t client_request_id, const CompactOp& request);
  void OnInterval();

  struct Running {
    std::optional<Address> client;
    uint64_t client_request_id = 0;
    uint64_t id = 0;  // of the ShardCompact requests
    std::set<ShardId> waiting;
    uint64_t pairs = 0;
    uint64_t bytes = 0;
    uint64_t paxos_states = 0;
    std::string error;  // the first shard's that stopped
  };

  ShardEnv env_;
  const uint32_t shards_;
  Tables tables_;
  const Nanos interval_;
  uint64_t last_id_ = 0;
  std::optional<Running> running_;
};

}  // namespace charybdis::repair
