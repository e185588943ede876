#pragma once

#include <functional>
#include <set>
#include <string>

#include "core/data/cell.h"
#include "core/telemetry/metrics.h"
#include "core/cluster/node_config.h"
#include "core/env/shard_env.h"
#include "proto/messages.pb.h"

namespace charybdis {

// A node's batch log (Cassandra's system.batchlog), on its shard 0: the
// logged batches coordinators store here before writing them
// (core/coordinator/batch_handler.h). A coordinator removes its entry once
// the batch met its level; an entry still here twice the write timeout
// after it was stored belongs to a batch whose coordinator failed, and
// this node replays it: each mutation written again with its own
// timestamps (so a batch applied twice is applied once), at ONE, so every
// live replica gets it and a down one a hint (when hinted handoff is on),
// until every mutation succeeds; then the entry goes. A mutation of a
// table this node does not know (dropped) is dropped.
class Batchlog {
 public:
  // Every key of the batch log in its shard's storage starts with this.
  static std::string EntryPrefix();

  using Reply = std::function<void(ClientResponse)>;
  using RunMutation = std::function<void(PartitionData, Timestamp, ConsistencyLevel, Reply)>;

  Batchlog(ShardEnv env, const NodeConfig& config, ShardMetrics& metrics, RunMutation run_mutation);
  Batchlog(const Batchlog&) = delete;
  Batchlog& operator=(const Batchlog&) = delete;

  void Start();  // the replay ticks
  void OnStore(const Envelope& message);
  void OnRemove(const Envelope& message);

 private:
  void Tick();
  void ReplayDue(const std::vector<KeyValue>& entries);
  void Replay(const std::string& key, const BatchlogEntry& entry);

  ShardEnv env_;
  const NodeConfig& config_;
  ShardMetrics& metrics_;
  RunMutation run_mutation_;
  bool scanning_ = false;
  std::string next_key_;  // where the next tick's scan starts ("" : the first)
  std::set<std::string> replaying_;  // keys
};

}  // namespace charybdis
