#pragma once

#include <functional>
#include <string>

#include "core/liveness.h"
#include "core/metrics.h"
#include "core/node_config.h"
#include "core/shard_env.h"
#include "core/token.h"

namespace charybdis {

class HintManager;

// What the coordinator's request handlers share on one shard.
struct CoordinatorContext {
  ShardEnv env;
  const NodeConfig& config;
  LivenessView& liveness;
  ShardMetrics& metrics;
  HintManager& hints;
  std::string local_datacenter;
  // Ids are (nonce of this life << 32 | counter): answers to an earlier life
  // of the shard (still on the wire after a restart) match no request.
  uint64_t request_id_base = 0;
  uint64_t last_request_id = 0;

  const TokenRing& ring() const { return *config.ring; }
  uint64_t NextRequestId() { return request_id_base | ++last_request_id; }
  // Sends to the shard of `replica` that owns `token`.
  void SendToReplica(NodeId replica, Token token, Envelope message) {
    env.network->Send(Address{replica, ShardOf(token, config.shards)}, std::move(message));
  }
};

}  // namespace charybdis
