#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>

#include "core/cluster/liveness.h"
#include "core/telemetry/metrics.h"
#include "core/cluster/node_config.h"
#include "core/env/shard_env.h"
#include "core/data/token.h"
#include "core/topology/placements.h"
#include "proto/data.pb.h"

namespace charybdis {

class HintManager;
class PendingRequest;

// What the coordinator's request handlers share on one shard.
struct CoordinatorContext {
  ShardEnv env;
  const NodeConfig& config;
  LivenessView& liveness;
  ShardMetrics& metrics;
  HintManager& hints;
  // Who replicates what, at the newest topology version the shard holds.
  topology::Placements& placements;
  std::string local_datacenter;
  // Ids are (nonce of this life << 32 | counter): answers to an earlier life
  // of the shard (still on the wire after a restart) match no request.
  uint64_t request_id_base = 0;
  uint64_t last_request_id = 0;

  // Routes replica answers carrying `id` to `request` (the coordinator's
  // table of requests in flight).
  std::function<void(uint64_t id, std::shared_ptr<PendingRequest> request)> track;
  // Forgets a tracked id: answers carrying it are dropped from then on.
  std::function<void(uint64_t id)> forget;
  // Finishes any unfinished Paxos round of a partition; `done(ok)`.
  std::function<void(Token, const std::string& table, const std::string& partition_key,
                     std::function<void(bool)> done)>
      finish_paxos;

  uint64_t NextRequestId() { return request_id_base | ++last_request_id; }
  // The shard of `replica` that owns `token`.
  Address ReplicaAddress(NodeId replica, Token token) const {
    return Address{replica, ShardOf(token, config.shards)};
  }
  // Sends to the shard of `replica` that owns `token`.
  void SendToReplica(NodeId replica, Token token, Envelope message) {
    env.network->Send(ReplicaAddress(replica, token), std::move(message));
  }
};

}  // namespace charybdis
