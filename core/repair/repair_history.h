#pragma once

// What a shard knows of the repairs of its tokens (docs/repair.md,
// "History"): for each table, the spans a repair brought into agreement
// on every replica, when that repair's range began, by the repairing
// node's clock, and the topology version it ran at. Tombstone GC in
// `repair` mode purges only what was deleted before that, and only while
// the topology is the one the repair ran at: a topology operation gives
// ranges to replicas no repair has compared yet.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>

#include "absl/status/status.h"
#include "core/data/cell.h"
#include "core/data/span_key.h"
#include "core/data/token.h"
#include "core/env/shard_env.h"
#include "core/topology/token_spans.h"
#include "proto/messages.pb.h"

namespace charybdis::repair {

class RepairHistory {
 public:
  explicit RepairHistory(ShardEnv env) : env_(env) {}
  RepairHistory(const RepairHistory&) = delete;
  RepairHistory& operator=(const RepairHistory&) = delete;

  // Reads the stored history (again later if the disk fails), then calls
  // `loaded`; until then nothing counts as repaired.
  void Start(std::function<void()> loaded);

  struct Repaired {
    Timestamp began_us = 0;  // 0: never
    uint64_t topology_version = 0;
  };
  // The newest repair that covered `token` of `table`.
  Repaired RepairedAt(const std::string& table, Token token) const;

  // A RepairRecord from a repairing shard: stores it synced, then acks.
  void OnRecord(const Envelope& message);

  // Where a shard keeps its history: one key per recorded span.
  static constexpr char kKeyPrefix[] = "system/repair_history/";

 private:
  // By table, then by span (last, first).
  using Spans = SpanRecords<Repaired>;
  void Record(const std::string& table, topology::TokenSpan span, Repaired repaired,
              std::function<void(absl::Status)> done);

  ShardEnv env_;
  bool loaded_ = false;
  std::map<std::string, Spans> tables_;
};

}  // namespace charybdis::repair
