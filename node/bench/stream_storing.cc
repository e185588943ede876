#include "node/bench/stream_storing.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "node/bench/bench_load.h"
#include "node/server/rocksdb_storage.h"
#include "node/server/storage_worker.h"

namespace charybdis::node {

namespace {

namespace fs = std::filesystem;

absl::Status Failed(const std::string& what, const rocksdb::Status& status) {
  return absl::InternalError(absl::StrCat(what, ": ", status.ToString()));
}

// Pair i's key: ascending, in a data key's shape (table, token, partition).
std::string KeyOf(uint64_t i) {
  return absl::StrCat(std::string("d\x01t\x00\x01", 5), absl::StrFormat("%016x-partition-%08d", i * 7919, i));
}

using Chunked = std::function<absl::Status(rocksdb::DB& db, const std::string& directory, uint64_t first, uint64_t end)>;

// Opens a fresh shard-like instance in `directory`, stores the pairs chunk
// by chunk with `store` (one call for all when `chunk_pairs` is 0), and
// returns the seconds it took.
absl::StatusOr<double> Time(const std::string& directory, uint64_t pairs, uint64_t chunk_pairs, const Chunked& store) {
  fs::remove_all(directory);
  fs::create_directories(directory);
  rocksdb::DB* opened = nullptr;
  if (rocksdb::Status status = rocksdb::DB::Open(RocksDbStorage::ShardOptions(), directory + "/db", &opened); !status.ok()) {
    return Failed("open", status);
  }
  std::unique_ptr<rocksdb::DB> db(opened);
  const auto began = std::chrono::steady_clock::now();
  const uint64_t step = chunk_pairs == 0 ? pairs : chunk_pairs;
  for (uint64_t first = 0; first < pairs; first += step) {
    if (absl::Status stored = store(*db, directory, first, std::min(pairs, first + step)); !stored.ok()) return stored;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  db->Close();
  db.reset();
  fs::remove_all(directory);
  return seconds;
}

absl::Status SyncedBatch(rocksdb::DB& db, uint32_t value_bytes, uint64_t first, uint64_t end) {
  rocksdb::WriteBatch batch;
  for (uint64_t i = first; i < end; i++) batch.Put(KeyOf(i), IncompressibleValue(value_bytes, i));
  rocksdb::WriteOptions synced;
  synced.sync = true;
  if (rocksdb::Status status = db.Write(synced, &batch); !status.ok()) return Failed("write", status);
  return absl::OkStatus();
}

// As a shard's SST ingester stores what a stream sends (node/server/storage_worker.h).
absl::Status IngestedSst(rocksdb::DB& db, const std::string& directory, uint32_t value_bytes, uint64_t first,
                         uint64_t end) {
  WriteBatch puts;
  for (uint64_t i = first; i < end; i++) puts.Put(KeyOf(i), IncompressibleValue(value_bytes, i));
  return WriteAndIngestSst(db, absl::StrCat(directory, "/chunk-", first, ".sst"), puts);
}

}  // namespace

absl::StatusOr<StreamStoringMeasures> MeasureStreamStoring(const std::string& directory,
                                                            const StreamStoringSizes& sizes) {
  StreamStoringMeasures measures;
  measures.pairs = sizes.bytes / sizes.value_bytes;
  measures.bytes = measures.pairs * (sizes.value_bytes + KeyOf(0).size());
  const uint32_t value_bytes = sizes.value_bytes;
  auto batches = Time(directory + "/batches", measures.pairs, sizes.chunk_pairs,
                      [&](rocksdb::DB& db, const std::string&, uint64_t first, uint64_t end) {
                        return SyncedBatch(db, value_bytes, first, end);
                      });
  if (!batches.ok()) return batches.status();
  const Chunked ingest = [&](rocksdb::DB& db, const std::string& dir, uint64_t first, uint64_t end) {
    return IngestedSst(db, dir, value_bytes, first, end);
  };
  auto per_chunk = Time(directory + "/sst-per-chunk", measures.pairs, sizes.chunk_pairs, ingest);
  if (!per_chunk.ok()) return per_chunk.status();
  auto one = Time(directory + "/one-sst", measures.pairs, 0, ingest);
  if (!one.ok()) return one.status();
  measures.batches_seconds = *batches;
  measures.sst_per_chunk_seconds = *per_chunk;
  measures.one_sst_seconds = *one;
  return measures;
}

std::vector<Comparison> StreamStoringComparisons(const StreamStoringMeasures& measures) {
  const double megabytes = measures.bytes / 1e6;
  std::vector<Comparison> comparisons;
  for (const auto& [how, seconds] : {std::pair<std::string, double>{"an SST ingested per chunk of 512", measures.sst_per_chunk_seconds},
                                     std::pair<std::string, double>{"one SST ingested per stream", measures.one_sst_seconds}}) {
    Comparison comparison;
    comparison.title = absl::StrFormat("j. storing %.0f MB of streamed pairs: %s", megabytes, how);
    comparison.unit = "MB/s";
    comparison.ours = megabytes / seconds;
    comparison.theirs = megabytes / measures.batches_seconds;
    comparison.theirs_name = "synced batches per chunk";
    comparison.lower_is_better = false;
    comparisons.push_back(comparison);
  }
  return comparisons;
}

}  // namespace charybdis::node
