#include "core/replica/shard_scan.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>

#include "core/data/storage_codec.h"
#include "core/env/assert.h"

namespace charybdis {

namespace {

// Entries per storage scan: a page of rows is usually a few batches.
constexpr size_t kBatchEntries = 256;

struct Progress {
  Storage* storage = nullptr;
  std::string begin;
  std::string end;
  uint32_t limit = 1;
  ShardScanResult result;
  uint32_t rows = 0;
  std::optional<std::pair<std::string, std::string>> last_row;  // partition, clustering key
  std::function<void(absl::StatusOr<ShardScanResult>)> done;
};

std::string BeginOf(const ScanOp& scan) {
  if (scan.resume()) {
    return storage_codec::PrefixEnd(
        storage_codec::RowPrefix(scan.table(), scan.after_partition_key(), scan.after_clustering_key()));
  }
  // (start, ...: the first token after start_token.
  if (scan.start_token() == std::numeric_limits<Token>::max()) {
    return storage_codec::PrefixEnd(storage_codec::TablePrefix(scan.table()));
  }
  return storage_codec::TokenPrefix(scan.table(), scan.start_token() + 1);
}

// Adds a batch's entries; false once a row beyond the limit shows up (the
// rows before it are then whole).
bool AddBatch(Progress& progress, std::vector<KeyValue> batch) {
  CHARYBDIS_ASSERT(progress.limit >= 1);
  for (KeyValue& entry : batch) {
    std::optional<storage_codec::StoredRow> row = storage_codec::RowOfKey(entry.key);
    // Range tombstones count as no row; they sort before their partition's
    // rows, so past the limit they are a later partition's.
    if (row && row->range_tombstones && progress.rows == progress.limit) return false;
    if (row && !row->range_tombstones) {
      std::pair<std::string, std::string> identity{row->partition_key, row->clustering_key};
      if (identity != progress.last_row) {
        if (progress.rows == progress.limit) return false;
        progress.rows++;
        CHARYBDIS_ASSERT(progress.rows <= progress.limit);
        progress.last_row = std::move(identity);
      }
    }
    progress.result.entries.push_back(std::move(entry));
  }
  return true;
}

void Step(std::shared_ptr<Progress> progress) {
  if (progress->begin >= progress->end) {
    progress->result.exhausted = true;
    return progress->done(std::move(progress->result));
  }
  progress->storage->Scan(progress->begin, progress->end, kBatchEntries,
                          [progress](absl::StatusOr<std::vector<KeyValue>> batch) {
                            if (!batch.ok()) return progress->done(batch.status());
                            CHARYBDIS_ASSERT(batch->size() <= kBatchEntries);  // Storage::Scan's limit
                            const bool last_batch = batch->size() < kBatchEntries;
                            if (!AddBatch(*progress, *std::move(batch))) {
                              return progress->done(std::move(progress->result));
                            }
                            // Storage::Scan sends fewer than asked only at the end.
                            if (last_batch) {
                              progress->result.exhausted = true;
                              return progress->done(std::move(progress->result));
                            }
                            // The key right after the last one read.
                            CHARYBDIS_ASSERT(!progress->result.entries.empty());
                            progress->begin = progress->result.entries.back().key + std::string(1, '\0');
                            Step(progress);
                          });
}

}  // namespace

void ScanShardRows(Storage& storage, const ScanOp& scan, std::function<void(absl::StatusOr<ShardScanResult>)> done) {
  auto progress = std::make_shared<Progress>();
  progress->storage = &storage;
  progress->begin = BeginOf(scan);
  progress->end = storage_codec::TokenRangeEnd(scan.table(), scan.end_token());
  progress->limit = std::max<uint32_t>(scan.limit(), 1);
  progress->done = std::move(done);
  if (!scan.resume()) return Step(std::move(progress));
  // Resumed within a partition: its range tombstones, which sort before
  // the resumed position, may delete the rows after it, so they go with
  // them again (a coordinator merges each page on its own).
  const std::string deletions = storage_codec::RangeTombstonePrefix(scan.table(), scan.after_partition_key());
  storage.Scan(deletions, storage_codec::PrefixEnd(deletions), SIZE_MAX,
               [progress](absl::StatusOr<std::vector<KeyValue>> stored) {
                 if (!stored.ok()) return progress->done(stored.status());
                 CHARYBDIS_ASSERT(progress->rows == 0);
                 const bool added = AddBatch(*progress, *std::move(stored));
                 CHARYBDIS_ASSERT(added);  // no rows among them
                 Step(progress);
               });
}

std::vector<std::pair<std::string, std::vector<KeyValue>>> GroupByPartition(std::vector<KeyValue> entries) {
  std::vector<std::pair<std::string, std::vector<KeyValue>>> partitions;
  for (KeyValue& entry : entries) {
    std::optional<storage_codec::StoredRow> row = storage_codec::RowOfKey(entry.key);
    // A partition's range tombstones come before its rows.
    if (partitions.empty() || (row && row->partition_key != partitions.back().first)) {
      partitions.emplace_back(row ? row->partition_key : std::string(), std::vector<KeyValue>());
    }
    CHARYBDIS_ASSERT(!partitions.empty());
    partitions.back().second.push_back(std::move(entry));
  }
  return partitions;
}

}  // namespace charybdis
