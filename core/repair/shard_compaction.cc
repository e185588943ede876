#include "core/repair/shard_compaction.h"

#include <limits>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/data/storage_codec.h"
#include "core/env/assert.h"

namespace charybdis::repair {

ShardCompaction::ShardCompaction(ShardEnv env, Tables tables, PurgeHorizon purge_horizon, PurgePaxos purge_paxos,
                                 ShardMetrics& metrics)
    : env_(env),
      tables_(std::move(tables)),
      purge_horizon_(std::move(purge_horizon)),
      purge_paxos_(std::move(purge_paxos)),
      metrics_(metrics) {
  CHARYBDIS_ASSERT(tables_ != nullptr && purge_horizon_ != nullptr && purge_paxos_ != nullptr);
}

void ShardCompaction::OnRequest(const Envelope& message) {
  CHARYBDIS_ASSERT(message.has_shard_compact() && message.from_node() == env_.self.node);
  const Address requester{message.from_node(), message.from_shard()};
  if (run_.has_value()) {
    Envelope refusal;
    refusal.mutable_shard_compact_done()->set_request_id(message.shard_compact().request_id());
    refusal.mutable_shard_compact_done()->set_error(absl::StrCat("shard ", env_.self.shard, " is already compacting"));
    return env_.network->Send(requester, std::move(refusal));
  }
  run_ = Run{requester, message.shard_compact().request_id(), tables_(message.shard_compact().compact())};
  Next();
}

void ShardCompaction::Next() {
  CHARYBDIS_ASSERT(run_.has_value());
  if (run_->table == run_->tables.size()) return CompactStorage();
  if (run_->paxos) return ScanPaxos();
  ScanOp scan;
  scan.set_table(run_->tables[run_->table]);
  scan.set_start_token(std::numeric_limits<Token>::min());  // no key has it
  scan.set_end_token(std::numeric_limits<Token>::max());
  if (run_->after.has_value()) {
    scan.set_resume(true);
    scan.set_after_partition_key(run_->after->first);
    scan.set_after_clustering_key(run_->after->second);
  }
  scan.set_limit(kBatchRows);
  ScanShardRows(*env_.storage, scan,
                [this](absl::StatusOr<ShardScanResult> scanned) { OnScanned(std::move(scanned)); });
}

WriteBatch ShardCompaction::PurgeOf(const std::vector<KeyValue>& entries, bool exhausted, uint64_t& bytes,
                                    uint64_t& deletions) {
  const std::string& table = run_->tables[run_->table];
  std::map<std::string, size_t> sizes;
  for (const KeyValue& entry : entries) sizes[entry.key] = entry.key.size() + entry.value.size();
  WriteBatch batch;
  std::vector<std::pair<std::string, std::vector<KeyValue>>> partitions = GroupByPartition(entries);
  std::optional<std::pair<std::string, std::set<std::string>>> spanning;
  for (size_t i = 0; i < partitions.size(); i++) {
    const auto& [partition_key, stored] = partitions[i];
    const storage_codec::Decoded decoded = storage_codec::DecodeScan(stored);
    // The rest of the last partition comes in the next batch, where its
    // range tombstones show up again: none goes before the rows it
    // shadows there.
    const bool ends_here = exhausted || i + 1 < partitions.size();
    // Corrupt entries are for reads to drop (and repair to write again);
    // the partition's range tombstones stay, if it goes on, as its rows do.
    if (!decoded.corrupt_keys.empty()) {
      if (!ends_here) spanning.emplace(partition_key, std::set<std::string>());
      continue;
    }
    std::set<std::string> held;
    for (const auto& [range, key] : decoded.range_tombstone_keys) held.insert(key);
    const bool continued = i == 0 && run_->spanning && run_->spanning->first == partition_key;
    if (continued) std::erase_if(held, [&](const std::string& key) { return !run_->spanning->second.count(key); });
    if (!ends_here) spanning.emplace(partition_key, held);
    const std::set<std::string> none;
    storage_codec::Purge purge = storage_codec::PurgedKeys(decoded, purge_horizon_(table, TokenOf(partition_key)),
                                                           ends_here ? &held : &none);
    deletions += purge.deletions;
    for (std::string& key : purge.keys) {
      bytes += sizes.at(key);
      batch.Delete(std::move(key));
    }
  }
  run_->spanning = std::move(spanning);
  return batch;
}

void ShardCompaction::OnScanned(absl::StatusOr<ShardScanResult> scanned) {
  CHARYBDIS_ASSERT(run_.has_value());
  if (!scanned.ok()) return Finish(absl::StrCat("storage: ", scanned.status().message()));
  uint64_t bytes = 0, deletions = 0;
  WriteBatch batch = PurgeOf(scanned->entries, scanned->exhausted, bytes, deletions);
  // The next batch starts after the last row scanned.
  std::optional<storage_codec::StoredRow> last;
  if (!scanned->entries.empty()) last = storage_codec::RowOfKey(scanned->entries.back().key);
  if (scanned->exhausted || !last.has_value()) {
    run_->paxos = true;
  } else {
    run_->after = {last->partition_key, last->clustering_key};
  }
  if (batch.operations.empty()) return env_.reactor->Post([this] { Next(); });
  const uint64_t pairs = batch.operations.size();
  env_.storage->Apply(std::move(batch), Durability::kSynced, [this, pairs, bytes, deletions](absl::Status applied) {
    CHARYBDIS_ASSERT(run_.has_value());
    if (!applied.ok()) return Finish(absl::StrCat("storage: ", applied.message()));
    CHARYBDIS_PROBE(env_.probes, "gc.purged");
    run_->pairs += pairs;
    run_->bytes += bytes;
    metrics_.gc_pairs_purged += pairs;
    metrics_.gc_bytes_purged += bytes;
    metrics_.gc_deletions_purged += deletions;
    Next();
  });
}

void ShardCompaction::ScanPaxos() {
  const std::string prefix = storage_codec::PaxosTablePrefix(run_->tables[run_->table]);
  // The smallest key after the last one scanned.
  std::string begin = run_->paxos_after.has_value() ? *run_->paxos_after + std::string(1, '\0') : prefix;
  env_.storage->Scan(std::move(begin), storage_codec::PrefixEnd(prefix), kBatchRows,
                     [this](absl::StatusOr<std::vector<KeyValue>> scanned) { OnPaxosScanned(std::move(scanned)); });
}

void ShardCompaction::OnPaxosScanned(absl::StatusOr<std::vector<KeyValue>> scanned) {
  CHARYBDIS_ASSERT(run_.has_value() && run_->paxos && run_->purges_waiting == 0);
  if (!scanned.ok()) return Finish(absl::StrCat("storage: ", scanned.status().message()));
  run_->paxos_exhausted = scanned->size() < kBatchRows;
  if (scanned->empty()) return NextTable();
  run_->paxos_after = scanned->back().key;
  const std::string table = run_->tables[run_->table];
  const uint64_t batch = run_->purge_batch = ++last_purge_batch_;
  run_->purges_waiting = scanned->size();
  env_.clock->After(kPurgeTimeout, [this, batch] {
    if (!run_.has_value() || run_->purge_batch != batch || run_->purges_waiting == 0) return;
    Finish(absl::StrCat("the acceptor did not answer for ", run_->purges_waiting,
                        " Paxos states within 10 s (a failed disk, or a corrupt state)"));
  });
  for (const KeyValue& entry : *scanned) {
    const std::optional<std::string> partition_key = storage_codec::PartitionOfPaxosKey(entry.key, table);
    const uint64_t bytes = entry.key.size() + entry.value.size();
    if (!partition_key.has_value()) {
      OnPaxosPurged(batch, false, 0);  // not a key of the table's
      continue;
    }
    purge_paxos_(table, *partition_key, [this, batch, bytes](bool purged) { OnPaxosPurged(batch, purged, bytes); });
  }
}

void ShardCompaction::OnPaxosPurged(uint64_t batch, bool purged, uint64_t bytes) {
  if (!run_.has_value() || run_->purge_batch != batch) return;  // the run gave up on it
  CHARYBDIS_ASSERT(run_->purges_waiting > 0);
  if (purged) {
    run_->pairs++;
    run_->bytes += bytes;
    run_->paxos_states++;
    metrics_.gc_pairs_purged++;
    metrics_.gc_bytes_purged += bytes;
  }
  if (--run_->purges_waiting > 0) return;
  if (run_->paxos_exhausted) return NextTable();
  Next();
}

void ShardCompaction::NextTable() {
  run_->table++;
  run_->after.reset();
  run_->spanning.reset();
  run_->paxos = false;
  run_->paxos_after.reset();
  Next();
}

void ShardCompaction::CompactStorage() {
  // The purge only deleted keys; their space, and that of every key
  // deleted before, comes back with a compaction of the storage.
  env_.storage->Compact([this](absl::Status compacted) {
    CHARYBDIS_ASSERT(run_.has_value());
    Finish(compacted.ok() ? "" : absl::StrCat("storage: ", compacted.message()));
  });
}

void ShardCompaction::Finish(const std::string& error) {
  CHARYBDIS_ASSERT(run_.has_value());
  Envelope answer;
  ShardCompactDone& done = *answer.mutable_shard_compact_done();
  done.set_request_id(run_->request_id);
  done.set_ok(error.empty());
  done.set_error(error);
  done.set_pairs(run_->pairs);
  done.set_bytes(run_->bytes);
  done.set_paxos_states(run_->paxos_states);
  const Address requester = run_->requester;
  run_.reset();
  env_.network->Send(requester, std::move(answer));
}

}  // namespace charybdis::repair
