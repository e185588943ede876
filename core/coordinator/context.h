#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>

#include "core/liveness.h"
#include "core/metrics.h"
#include "core/node_config.h"
#include "core/paxos/ballot.h"
#include "core/shard_env.h"
#include "core/token.h"
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
  std::string local_datacenter;
  // Ids are (nonce of this life << 32 | counter): answers to an earlier life
  // of the shard (still on the wire after a restart) match no request.
  uint64_t request_id_base = 0;
  uint64_t last_request_id = 0;

  // Ballots: strictly above every ballot time this shard has seen, and
  // unique: (node, shard, a random nonce of this life, counter). The nonce
  // matters: after a restart with a clock stepped back, time alone could
  // repeat a ballot of the previous life.
  int64_t highest_ballot_micros = 0;
  uint64_t ballot_nonce = 0;  // 20 random bits, set at start
  uint32_t ballot_counter = 0;

  Ballot NewBallot() {
    const int64_t previous = highest_ballot_micros;
    Ballot ballot;
    const int64_t now = env.clock->Now() / kMicrosecond;
    highest_ballot_micros = std::max(now, highest_ballot_micros + 1);
    ballot.set_micros(highest_ballot_micros);
    ballot.set_unique(BallotUnique(env.self.node, env.self.shard, ballot_nonce, ++ballot_counter));
    // Strictly above every ballot this shard made or saw, whatever the clock did.
    CHARYBDIS_ASSERT(ballot.micros() > previous);
    CHARYBDIS_ASSERT(ballot.micros() >= now);
    return ballot;
  }
  void SeeBallot(const Ballot& ballot) {
    highest_ballot_micros = std::max(highest_ballot_micros, ballot.micros());
  }

  // Routes replica answers carrying `id` to `request` (the coordinator's
  // table of requests in flight).
  std::function<void(uint64_t id, std::shared_ptr<PendingRequest> request)> track;
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
