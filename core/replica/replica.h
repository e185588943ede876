#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/data/tombstone_gc.h"
#include "core/telemetry/metrics.h"
#include "core/replica/unfinished_rounds.h"
#include "core/env/shard_env.h"

namespace charybdis {

// The replica side of the data path on one shard: applies mutations
// durably and serves reads (data or digest) and scans from the shard's
// storage.
class Replica {
 public:
  // `rounds` tells which partitions have an unfinished Paxos round;
  // `fence` is the oldest topology version a routed write or read may carry
  // (raised by the barrier, core/topology/barrier_answerer.h).
  // `purge_horizon`: what reads leave out as purgeable (core/data/tombstone_gc.h);
  // `replay_horizon`: what a replay's writes from before are dropped.
  Replica(ShardEnv env, ShardMetrics& metrics, const UnfinishedRounds& rounds, const uint64_t& fence,
          PurgeHorizon purge_horizon, PurgeHorizon replay_horizon)
      : env_(env),
        metrics_(metrics),
        rounds_(rounds),
        fence_(fence),
        purge_horizon_(std::move(purge_horizon)),
        replay_horizon_(std::move(replay_horizon)) {}

  void OnWrite(const Envelope& message);
  void OnRead(const Envelope& message);
  // One shard's part of a scan (core/replica/shard_scan.h).
  void OnScan(const Envelope& message);
  // A Paxos prepare or accept routed by a topology older than the fence:
  // answers it refused, and says so (true); else leaves it to the acceptor.
  bool RefusedPaxos(const Envelope& message);

 private:
  // Whom a read answers, and what its answer carries besides its data.
  struct ReadAnswer {
    Address sender;
    uint64_t request_id = 0;
    bool digest_only = false;
    bool paxos_in_progress = false;
    Timestamp purge_before = 0;
  };
  // Answers a read with what it found: its data or digest, and where a
  // read with a limit stopped.
  void Answer(const ReadAnswer& to, absl::StatusOr<std::vector<KeyValue>> stored,
              std::optional<std::string> read_through);
  // Whether a request routed by `topology_version` is older than the fence.
  bool Fenced(uint64_t topology_version) const;

  ShardEnv env_;
  ShardMetrics& metrics_;
  const UnfinishedRounds& rounds_;
  const uint64_t& fence_;
  PurgeHorizon purge_horizon_;
  PurgeHorizon replay_horizon_;
};

}  // namespace charybdis
