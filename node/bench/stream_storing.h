#pragma once

// How a stream receiver on real nodes should store what it is sent (issue
// 30: "use RocksDB's own fast path for bulk loading where it fits, and
// measure it against row-by-row writes"). The same pairs, in ascending key
// order as a stream delivers them, into a fresh RocksDB opened as a shard
// opens one, three ways:
//  - synced batches: a WriteBatch per chunk, written with sync, as
//    receivers store each chunk today (WAL, memtable, later flush);
//  - an SST per chunk: SstFileWriter, then IngestExternalFile (moved);
//  - one SST per stream: every pair into one file, ingested once.
// Each is durable when it returns: a synced write, or an ingestion (the
// file and the manifest synced).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "node/bench/bench_report.h"

namespace charybdis::node {

struct StreamStoringSizes {
  uint64_t bytes = 256ull << 20;
  uint32_t value_bytes = 4096;
  uint32_t chunk_pairs = 512;  // core/replica/stream_source.h's kMaxStreamPairs
};

struct StreamStoringMeasures {
  uint64_t pairs = 0;
  uint64_t bytes = 0;  // keys and values
  double batches_seconds = 0;
  double sst_per_chunk_seconds = 0;
  double one_sst_seconds = 0;
};

// Each way in a directory of its own under `directory` (removed after).
absl::StatusOr<StreamStoringMeasures> MeasureStreamStoring(const std::string& directory,
                                                            const StreamStoringSizes& sizes);

// Each ingestion beside synced batches, in MB/s (no goal: a measure to
// choose by, docs/topology.md "What a stream carries").
std::vector<Comparison> StreamStoringComparisons(const StreamStoringMeasures& measures);

}  // namespace charybdis::node
