#pragma once

// A shard's part of `ctl compact` (docs/repair.md, "Tombstone GC"): for
// each table asked, scans the shard's rows a batch at a time and deletes,
// in one synced batch per scanned batch, their obsolete versions and each
// deletion its tombstone GC lets go, with every version it shadows
// (storage_codec::PurgedKeys), by the shard's purge horizon; then has the
// acceptor purge each of the table's Paxos states wholly below its purge
// floor (Acceptor::Purge); then compacts the storage (Storage::Compact),
// which gives their space back.

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/data/tombstone_gc.h"
#include "core/env/shard_env.h"
#include "core/replica/shard_scan.h"
#include "core/telemetry/metrics.h"
#include "proto/messages.pb.h"

namespace charybdis::repair {

class ShardCompaction {
 public:
  // The storage tables a CompactOp names.
  using Tables = std::function<std::vector<std::string>(const CompactOp&)>;
  // Purges a partition's Paxos state if it may go (the acceptor's).
  using PurgePaxos =
      std::function<void(const std::string& table, const std::string& partition_key, std::function<void(bool)>)>;
  ShardCompaction(ShardEnv env, Tables tables, PurgeHorizon purge_horizon, PurgePaxos purge_paxos,
                  ShardMetrics& metrics);
  ShardCompaction(const ShardCompaction&) = delete;
  ShardCompaction& operator=(const ShardCompaction&) = delete;

  // A ShardCompact from shard 0.
  void OnRequest(const Envelope& message);

  // Rows one batch scans.
  static constexpr uint32_t kBatchRows = 256;
  // How long the acceptor may take to answer a batch's purges: it drops
  // a decision whose state it cannot load (a failed disk, a corrupt state).
  static constexpr Nanos kPurgeTimeout = 10 * kSecond;

 private:
  struct Run {
    Address requester;
    uint64_t request_id = 0;
    std::vector<std::string> tables;
    size_t table = 0;
    // The next batch starts after this row (none: at the table's start).
    std::optional<std::pair<std::string, std::string>> after;
    // The partition the last batch ended inside, and the stored keys of
    // the range tombstones every batch of it held: only those shadowed
    // each batch's rows, so only those may go with its last batch (one
    // written in between did not have its rows of earlier batches dropped).
    std::optional<std::pair<std::string, std::set<std::string>>> spanning;
    // The table's rows are done; its Paxos states are next, after this
    // key (none: from the first).
    bool paxos = false;
    std::optional<std::string> paxos_after;
    uint64_t purge_batch = 0;  // the batch whose purges are waited for
    size_t purges_waiting = 0;
    bool paxos_exhausted = false;
    uint64_t pairs = 0;
    uint64_t bytes = 0;
    uint64_t paxos_states = 0;
  };
  void Next();
  void OnScanned(absl::StatusOr<ShardScanResult> scanned);
  // The batch that purges the scanned rows, its pairs' bytes, and the
  // deletions among them. `exhausted`: the last partition scanned ends
  // here. Updates run_->spanning.
  WriteBatch PurgeOf(const std::vector<KeyValue>& entries, bool exhausted, uint64_t& bytes, uint64_t& deletions);
  void ScanPaxos();
  void OnPaxosScanned(absl::StatusOr<std::vector<KeyValue>> scanned);
  void OnPaxosPurged(uint64_t batch, bool purged, uint64_t bytes);
  // The table is done: on to the next one's rows.
  void NextTable();
  void CompactStorage();
  void Finish(const std::string& error);

  ShardEnv env_;
  Tables tables_;
  PurgeHorizon purge_horizon_;
  PurgePaxos purge_paxos_;
  ShardMetrics& metrics_;
  std::optional<Run> run_;
  uint64_t last_purge_batch_ = 0;  // across runs: a late answer names an old one
};

}  // namespace charybdis::repair
