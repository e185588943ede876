#pragma once

// The replica side of repair (docs/repair.md), on every shard: hashes the
// shard's rows of a span for the repairing shard, serves it the rows that
// differ, and applies the rows it sends, synced before the ack.

#include "core/data/tombstone_gc.h"
#include "core/env/shard_env.h"
#include "core/telemetry/metrics.h"
#include "proto/messages.pb.h"

namespace charybdis::repair {

class RepairAnswerer {
 public:
  // `purge_horizon`: what rows are hashed and served without, as reads
  // serve them (core/data/tombstone_gc.h).
  RepairAnswerer(ShardEnv env, ShardMetrics& metrics, PurgeHorizon purge_horizon)
      : env_(env), metrics_(metrics), purge_horizon_(std::move(purge_horizon)) {}
  RepairAnswerer(const RepairAnswerer&) = delete;
  RepairAnswerer& operator=(const RepairAnswerer&) = delete;

  void OnHashRequest(const Envelope& message);
  void OnFetch(const Envelope& message);
  void OnPush(const Envelope& message);

 private:
  ShardEnv env_;
  ShardMetrics& metrics_;
  PurgeHorizon purge_horizon_;
};

}  // namespace charybdis::repair
