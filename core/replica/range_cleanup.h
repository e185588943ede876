#pragma once

// A shard's part of `ctl cleanup` (docs/topology.md "Cleanup"): removes
// the stored rows and Paxos states of the token ranges its node does not
// replicate, one scanned batch at a time, synced, and answers shard 0 with
// what it removed. It stops, keeping what it removed so far, the moment
// removing could lose data: when the shard's topology moves past the
// version it began at (a new operation makes this node gain ranges it does
// not own yet), or while a stream comes into the shard.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/cluster/cluster_layout.h"
#include "core/env/shard_env.h"
#include "core/telemetry/metrics.h"
#include "core/topology/token_spans.h"
#include "core/topology/topology_log.h"
#include "proto/messages.pb.h"

namespace charybdis {

class RangeCleanup {
 public:
  // The storage tables placed by token, each with its replication.
  using Tables = std::function<std::map<std::string, ReplicationConfig>()>;
  // Whether a stream is coming into this shard.
  using Streaming = std::function<bool()>;
  RangeCleanup(ShardEnv env, const topology::TopologyLog& log, Tables tables, Streaming streaming,
               ShardMetrics& metrics);
  RangeCleanup(const RangeCleanup&) = delete;
  RangeCleanup& operator=(const RangeCleanup&) = delete;

  // A ShardCleanup from shard 0.
  void OnRequest(const Envelope& message);

  // Most pairs one batch scans and removes.
  static constexpr size_t kBatchPairs = 512;

 private:
  // One table's rows in the ranges, or its Paxos states (which sort by
  // partition key, not token: every one is scanned, those in the ranges
  // removed).
  struct Part {
    std::string table;
    bool paxos = false;
    std::vector<topology::TokenSpan> spans;
    size_t span = 0;  // rows: the span being scanned
  };
  struct Run {
    Address requester;
    uint64_t request_id = 0;
    uint64_t version = 0;
    std::vector<Part> parts;
    size_t part = 0;
    std::string after;  // the scan goes on after this key ("": from the start)
    uint64_t pairs = 0;
    uint64_t bytes = 0;
  };

  // The parts of a cleanup at the shard's version, or why there is none.
  absl::StatusOr<std::vector<Part>> PlanParts() const;
  void Next();
  void OnScanned(absl::StatusOr<std::vector<KeyValue>> scanned);
  // Moves past what a scan of `scanned` pairs covered.
  void Advance(const std::vector<KeyValue>& scanned);
  // Why removing more could lose data now ("" if it cannot).
  std::string Unsafe() const;
  void Finish(const std::string& error);

  ShardEnv env_;
  const topology::TopologyLog& log_;
  Tables tables_;
  Streaming streaming_;
  ShardMetrics& metrics_;
  std::optional<Run> run_;
};

}  // namespace charybdis
