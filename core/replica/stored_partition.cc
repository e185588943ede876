#include "core/replica/stored_partition.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "core/data/storage_codec.h"
#include "core/data/tombstone_gc.h"
#include "core/env/assert.h"

namespace charybdis {

absl::StatusOr<Partition> ServablePartition(const ShardEnv& env, ShardMetrics& metrics,
                                            absl::StatusOr<std::vector<KeyValue>> stored, Timestamp purge_before) {
  if (!stored.ok()) {
    metrics.database_failed_reads++;
    return stored.status();
  }
  storage_codec::Decoded decoded = storage_codec::DecodeScan(*stored);
  storage_codec::DropKeys(*env.storage, decoded.obsolete_keys);
  if (!decoded.corrupt_keys.empty()) {
    CHARYBDIS_PROBE(env.probes, "storage.corrupt_entry");
    metrics.database_failed_reads++;
    metrics.database_corrupt_entries += decoded.corrupt_keys.size();
    storage_codec::DropKeys(*env.storage, decoded.corrupt_keys);
    return absl::DataLossError(absl::StrCat(decoded.corrupt_keys.size(), " of ", stored->size(),
                                            " stored versions fail their checksum"));
  }
  metrics.database_total_reads++;
  DropPurgeable(decoded.partition, purge_before);
  return std::move(decoded.partition);
}

namespace {

// Scans `ranges` (in key order, disjoint, not empty) and joins what they
// hold in that order, which is key order.
void ScanInOrder(Storage& storage, std::vector<std::pair<std::string, std::string>> ranges, Storage::ScanDone done) {
  CHARYBDIS_ASSERT(!ranges.empty());
  if (ranges.size() == 1) {
    // As for most reads: the scan's answer is the answer, no parts to join.
    return storage.Scan(std::move(ranges[0].first), std::move(ranges[0].second), SIZE_MAX, std::move(done));
  }
  struct Gather {
    std::vector<std::vector<KeyValue>> parts;
    size_t waiting = 0;
    absl::Status status;
    Storage::ScanDone done;
  };
  auto gather = std::make_shared<Gather>();
  gather->parts.resize(ranges.size());
  gather->waiting = ranges.size();
  gather->done = std::move(done);
  for (size_t i = 0; i < ranges.size(); i++) {
    CHARYBDIS_ASSERT(ranges[i].first < ranges[i].second);
    CHARYBDIS_ASSERT(i == 0 || ranges[i - 1].second <= ranges[i].first);
    storage.Scan(ranges[i].first, ranges[i].second, SIZE_MAX, [gather, i](absl::StatusOr<std::vector<KeyValue>> stored) {
      if (stored.ok()) {
        gather->parts[i] = std::move(*stored);
      } else if (gather->status.ok()) {
        gather->status = stored.status();
      }
      CHARYBDIS_ASSERT(gather->waiting > 0);
      if (--gather->waiting > 0) return;
      if (!gather->status.ok()) return gather->done(gather->status);
      std::vector<KeyValue> entries;
      for (auto& part : gather->parts) {
        entries.insert(entries.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
      }
      gather->done(std::move(entries));
    });
  }
}

}  // namespace

void ScanPartitionRows(Storage& storage, const std::string& table, const std::string& partition_key,
                       std::vector<std::pair<std::string, std::string>> row_ranges, Storage::ScanDone done) {
  const std::string deletions = storage_codec::RangeTombstonePrefix(table, partition_key);
  // Where they end, the partition's first row begins (storage_codec.h).
  std::string deletions_end = storage_codec::PrefixEnd(deletions);
  // A slice whose bounds cross (c > 5 AND c < 3) reads no rows.
  std::erase_if(row_ranges, [](const auto& range) { return range.second <= range.first; });
  CHARYBDIS_ASSERT(row_ranges.empty() || deletions_end <= row_ranges.front().first);
  // Rows from the partition's first key on (a whole partition, the one
  // row of a table without clustering columns): the range tombstones are
  // right before them, so one scan reads both, as it did before there
  // were range tombstones.
  if (!row_ranges.empty() && row_ranges.front().first == deletions_end) {
    row_ranges.front().first = deletions;
  } else {
    row_ranges.insert(row_ranges.begin(), {deletions, std::move(deletions_end)});
  }
  ScanInOrder(storage, std::move(row_ranges), std::move(done));
}

}  // namespace charybdis
