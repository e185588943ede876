#include "core/replica/stored_partition.h"

#include <algorithm>
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

// Reads `ranges` (in key order, disjoint, not empty) from one snapshot and
// joins what they hold in that order, which is key order.
void ScanInOrder(Storage& storage, std::vector<std::pair<std::string, std::string>> ranges, Storage::ScanDone done) {
  CHARYBDIS_ASSERT(!ranges.empty());
  if (ranges.size() == 1) {
    // As for most reads: the scan's answer is the answer, no parts to
    // join, and a whole partition's range may fill the read cache.
    return storage.Scan(std::move(ranges[0].first), std::move(ranges[0].second), SIZE_MAX, std::move(done));
  }
  std::vector<ScanRange> scans;
  for (size_t i = 0; i < ranges.size(); i++) {
    CHARYBDIS_ASSERT(ranges[i].first < ranges[i].second);
    CHARYBDIS_ASSERT(i == 0 || ranges[i - 1].second <= ranges[i].first);
    scans.push_back(ScanRange{std::move(ranges[i].first), std::move(ranges[i].second)});
  }
  storage.ScanRanges(std::move(scans), [done = std::move(done)](absl::StatusOr<std::vector<std::vector<KeyValue>>> parts) {
    if (!parts.ok()) return done(parts.status());
    std::vector<KeyValue> entries;
    for (auto& part : *parts) {
      entries.insert(entries.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
    }
    done(std::move(entries));
  });
}

// Where a read of `limit` rows stops in `rows` (a scan's stored entries in
// key order, `capped` if it stopped at its entry limit): after the first
// `limit` whole rows, with the last one's clustering key, when another row
// follows; after all of them when the scan reached the range's end. None:
// a capped scan that ends inside its first `limit` rows, which must read
// more. A stop that depends on rows only, so that replicas holding the
// same rows stop at the same one, whatever old versions each still keeps
// (their digests hold the stop). `started`: the rows it saw begin.
struct Stop {
  size_t entries = 0;
  std::optional<std::string> read_through;
};
std::optional<Stop> StopOf(const std::vector<KeyValue>& rows, bool capped, uint32_t limit, uint32_t& started) {
  started = 0;
  std::optional<std::string> current;  // the clustering key of the row being walked
  for (size_t i = 0; i < rows.size(); i++) {
    const std::optional<storage_codec::StoredRow> row = storage_codec::RowOfKey(rows[i].key);
    // A garbage key stays with the row before it, whose decoding then
    // finds it corrupt.
    if (!row || row->clustering_key == current) continue;
    CHARYBDIS_ASSERT(!row->range_tombstones);  // they are a range of their own
    if (started == limit) return Stop{i, current};  // the row after the limit begins
    started++;
    current = row->clustering_key;
  }
  if (capped) return std::nullopt;
  return Stop{rows.size(), std::nullopt};
}

// One attempt of ScanPartitionRowsUpTo, reading at most `cap` entries of
// rows; again, with room for `limit` rows as large as those it saw, while
// they do not fit.
void ReadRowsUpTo(Storage& storage, std::vector<ScanRange> ranges, size_t cap, uint32_t limit,
                  std::function<void(absl::StatusOr<RowsUpTo>)> done) {
  CHARYBDIS_ASSERT(ranges.size() == 2);  // the range tombstones, then the rows
  ranges.back().limit = cap;
  storage.ScanRanges(ranges, [&storage, ranges, cap, limit, done = std::move(done)](
                                 absl::StatusOr<std::vector<std::vector<KeyValue>>> parts) mutable {
    if (!parts.ok()) return done(parts.status());
    CHARYBDIS_ASSERT(parts->size() == ranges.size());
    std::vector<KeyValue>& rows = parts->back();
    uint32_t started = 0;
    const std::optional<Stop> stop = StopOf(rows, rows.size() == cap, limit, started);
    if (!stop) {
      const size_t fitting = started == 0 ? cap * 4 : rows.size() / started * (size_t{limit} + 1) * 5 / 4 + 64;
      return ReadRowsUpTo(storage, std::move(ranges), std::max(cap * 2, fitting), limit, std::move(done));
    }
    rows.resize(stop->entries);
    RowsUpTo read{std::move(parts->front()), stop->read_through};
    read.entries.insert(read.entries.end(), std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()));
    done(std::move(read));
  });
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

void ScanPartitionRowsUpTo(Storage& storage, const std::string& table, const std::string& partition_key,
                           std::string begin, std::string end, uint32_t limit, bool tiny_first_scan,
                           std::function<void(absl::StatusOr<RowsUpTo>)> done) {
  CHARYBDIS_ASSERT(limit >= 1);
  std::string deletions = storage_codec::RangeTombstonePrefix(table, partition_key);
  std::string deletions_end = storage_codec::PrefixEnd(deletions);
  CHARYBDIS_ASSERT(deletions_end <= begin);  // rows sort after them
  // Apart, so that the cap counts rows' entries only.
  std::vector<ScanRange> ranges = {ScanRange{std::move(deletions), std::move(deletions_end)},
                                   ScanRange{std::move(begin), std::move(end)}};
  // A row is a few entries (its marker, a version of each cell): most
  // reads take one scan.
  const size_t cap = tiny_first_scan ? 1 : 4 * (size_t{limit} + 1) + 64;
  ReadRowsUpTo(storage, std::move(ranges), cap, limit, std::move(done));
}

}  // namespace charybdis
