#pragma once

#include <string>
#include <vector>

#include "core/metrics.h"
#include "core/paxos/acceptor.h"
#include "core/shard_env.h"

namespace charybdis {

// The replica side of the data path on one shard: applies mutations
// durably and serves reads (data or digest) and scans from the shard's
// storage.
class Replica {
 public:
  // `acceptor` tells which partitions have an unfinished Paxos round.
  Replica(ShardEnv env, ShardMetrics& metrics, const Acceptor& acceptor)
      : env_(env), metrics_(metrics), acceptor_(acceptor) {}

  void OnWrite(const Envelope& message);
  void OnRead(const Envelope& message);
  // One shard's part of a scan (core/replica/shard_scan.h).
  void OnScan(const Envelope& message);

 private:

  ShardEnv env_;
  ShardMetrics& metrics_;
  const Acceptor& acceptor_;
};

}  // namespace charybdis
