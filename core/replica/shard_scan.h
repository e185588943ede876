#pragma once

// One shard's part of a scan (ScanOp): its stored rows in ring order from
// the scan's start, read in batches until more than `limit` rows have
// shown up or the range ends. The shard holds only the tokens it owns, so
// a node answers a scan with every shard's part.

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/env/storage.h"
#include "proto/client.pb.h"

namespace charybdis {

struct ShardScanResult {
  // The stored entries of the first `limit` rows (tombstoned and expired
  // rows count: only a coordinator can tell what is live), whole.
  std::vector<KeyValue> entries;
  // The range holds nothing after them.
  bool exhausted = false;
};

void ScanShardRows(Storage& storage, const ScanOp& scan, std::function<void(absl::StatusOr<ShardScanResult>)> done);

// The entries of each partition, in order: (partition key, entries). An
// entry of no partition (not a data key) goes with the one before it, whose
// decoding then finds it corrupt.
std::vector<std::pair<std::string, std::vector<KeyValue>>> GroupByPartition(std::vector<KeyValue> entries);

}  // namespace charybdis
