#pragma once

// Gives back a shard's space of dropped tables (docs/repair.md, "Dropped
// tables"): a dropped table's storage name is never used again (a table
// created again is stored under a new one, docs/cql.md), so once the
// schema log drops it every key of it may go, its rows and its Paxos
// states. Each is deleted a batch at a time, unsynced (a crash brings
// some back, and the next life deletes them again: the schema log names
// every dropped table at each start); once a table is gone, the storage
// is compacted, which gives the space back.

#include <cstdint>
#include <deque>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/env/shard_env.h"
#include "core/telemetry/metrics.h"

namespace charybdis::repair {

class DroppedTables {
 public:
  DroppedTables(ShardEnv env, ShardMetrics& metrics) : env_(env), metrics_(metrics) {}
  DroppedTables(const DroppedTables&) = delete;
  DroppedTables& operator=(const DroppedTables&) = delete;

  // The schema log's dropped storage tables, all of them so far: those
  // not reclaimed in this life yet are, in turn.
  void Reclaim(const std::set<std::string>& dropped);

  // Keys one batch deletes.
  static constexpr size_t kBatchKeys = 1024;

 private:
  void Next();
  void OnScanned(absl::StatusOr<std::vector<KeyValue>> scanned);
  // The prefixes of the table at the queue's front, in the order they go.
  std::vector<std::string> PrefixesOf(const std::string& table) const;

  ShardEnv env_;
  ShardMetrics& metrics_;
  std::set<std::string> known_;  // queued or reclaimed in this life
  std::deque<std::string> queue_;
  size_t prefix_ = 0;  // of the front table's PrefixesOf
  // The last key deleted under it: the next scan starts after it, not
  // among the deletes RocksDB keeps until a compaction.
  std::string deleted_up_to_;
  bool busy_ = false;
  bool deleted_ = false;  // since the last compaction
};

}  // namespace charybdis::repair
