#pragma once

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/data/partition.h"
#include "core/telemetry/metrics.h"
#include "core/env/shard_env.h"
#include "core/env/storage.h"

namespace charybdis {

// The partition a shard scanned from its storage, fit to serve to a
// coordinator or a proposer, or why not: the scan's own error when the disk
// failed, DataLoss when an entry failed its checksum. A replica never
// serves bytes it cannot vouch for: it answers an error, drops the corrupt
// entries, and read repair or a Paxos commit writes their data back.
// Obsolete versions are dropped too. Counts the read in `metrics`. Served
// without the deletions a purge before `purge_before` lets go
// (core/data/tombstone_gc.h: DropPurgeable).
absl::StatusOr<Partition> ServablePartition(const ShardEnv& env, ShardMetrics& metrics,
                                            absl::StatusOr<std::vector<KeyValue>> stored,
                                            Timestamp purge_before = std::numeric_limits<Timestamp>::min());

// Scans the key ranges `row_ranges` (rows of one partition, in key order,
// disjoint; empty or crossed ones read nothing) and the partition's range
// tombstones, which may delete any of them, from one snapshot: the stored
// entries a read of those rows must reconcile, in key order.
void ScanPartitionRows(Storage& storage, const std::string& table, const std::string& partition_key,
                       std::vector<std::pair<std::string, std::string>> row_ranges, Storage::ScanDone done);

// What a read with a limit found: the stored entries of its range
// tombstones and of its first `limit` rows (tombstoned and expired ones
// count: only a coordinator can tell what is live), each whole, and the
// last one's clustering key when the range may hold more.
struct RowsUpTo {
  std::vector<KeyValue> entries;
  std::optional<std::string> read_through;
};

// The partition's range tombstones and its rows with keys in [begin, end)
// (storage keys of its rows) up to `limit` rows, read from one snapshot
// (Storage::ScanRanges) with a cap on the entries read: a read with a
// limit (ReadOp.limit), so that a page of a big partition reads what it
// returns and not the rest of the partition. `tiny_first_scan`: the first
// storage scan reads one entry (a Buggify site's, so that the scans again
// with more room run in simulations).
void ScanPartitionRowsUpTo(Storage& storage, const std::string& table, const std::string& partition_key,
                           std::string begin, std::string end, uint32_t limit, bool tiny_first_scan,
                           std::function<void(absl::StatusOr<RowsUpTo>)> done);

}  // namespace charybdis
