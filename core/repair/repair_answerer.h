#pragma once

// The replica side of repair (docs/repair.md), on every shard: hashes the
// shard's rows of a span for the repairing shard, serves it the rows that
// differ, and applies the rows it sends, synced before the ack.

#include "core/env/shard_env.h"
#include "core/telemetry/metrics.h"
#include "proto/messages.pb.h"

namespace charybdis::repair {

class RepairAnswerer {
 public:
  RepairAnswerer(ShardEnv env, ShardMetrics& metrics) : env_(env), metrics_(metrics) {}
  RepairAnswerer(const RepairAnswerer&) = delete;
  RepairAnswerer& operator=(const RepairAnswerer&) = delete;

  void OnHashRequest(const Envelope& message);
  void OnFetch(const Envelope& message);
  void OnPush(const Envelope& message);

 private:
  ShardEnv env_;
  ShardMetrics& metrics_;
};

}  // namespace charybdis::repair
