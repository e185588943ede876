#include "node/server/rocksdb_storage.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "core/env/commitlog_sync.h"
#include "core/data/storage_codec.h"

namespace charybdis::node {

rocksdb::Options RocksDbStorage::ShardOptions() {
  rocksdb::Options options;
  options.create_if_missing = true;
  // One small instance per shard: keep its threads and memory modest.
  options.IncreaseParallelism(1);
  options.max_background_jobs = 2;
  options.write_buffer_size = 16 << 20;
  // SST files (flushes, compactions, streamed files) are written back as
  // they grow, 1 MiB at a time, rather than all at their final sync, which
  // would hold up the log writer's fsyncs behind it (measured during a
  // join: fewer slow group writes on the streaming sources).
  options.bytes_per_sync = 1 << 20;
  return options;
}

absl::StatusOr<std::unique_ptr<RocksDbStorage>> RocksDbStorage::Open(const std::string& directory,
                                                                    Reactor* reactor,
                                                                    const CommitlogSync& sync,
                                                                    rocksdb::Env* env) {
  rocksdb::Options options = ShardOptions();
  if (env != nullptr) options.env = env;
  rocksdb::DB* db = nullptr;
  const rocksdb::Status status = rocksdb::DB::Open(options, directory, &db);
  if (!status.ok()) return ToStatus(status);
  std::unique_ptr<rocksdb::DB> owned(db);
  if (absl::Status format = CheckFormat(*owned, directory); !format.ok()) return format;
  return std::unique_ptr<RocksDbStorage>(new RocksDbStorage(std::move(owned), reactor, sync, directory));
}

absl::Status RocksDbStorage::CheckFormat(rocksdb::DB& db, const std::string& directory) {
  std::string format;
  const rocksdb::Status found = db.Get(rocksdb::ReadOptions(), storage_codec::kFormatKey, &format);
  if (found.ok() && format == storage_codec::kFormatVersion) return absl::OkStatus();
  rocksdb::WriteOptions synced;
  synced.sync = true;
  if (found.ok() && format == storage_codec::kUpgradableFormat) {
    return ToStatus(db.Put(synced, storage_codec::kFormatKey, storage_codec::kFormatVersion));
  }
  if (found.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(directory, " holds storage format ", format, "; this build reads format ",
                                                      storage_codec::kFormatVersion, " only"));
  }
  if (!found.IsNotFound()) return ToStatus(found);
  std::unique_ptr<rocksdb::Iterator> any(db.NewIterator(rocksdb::ReadOptions()));
  any->SeekToFirst();
  if (any->Valid()) {
    // Written before formats were recorded: its data keys have no token.
    return absl::FailedPreconditionError(absl::StrCat(
        directory, " was written by a build before storage format ", storage_codec::kFormatVersion,
        " (docs/data_path.md); start this node on an empty data directory"));
  }
  return ToStatus(db.Put(synced, storage_codec::kFormatKey, storage_codec::kFormatVersion));
}

RocksDbStorage::RocksDbStorage(std::unique_ptr<rocksdb::DB> db, Reactor* reactor,
                               const CommitlogSync& sync, const std::string& directory)
    : db_(std::move(db)),
      reactor_(reactor),
      periodic_(SyncPeriodMs(sync) > 0),
      log_writer_(std::make_unique<LogWriter>(*db_, *reactor_, sync)),
      worker_(std::make_unique<StorageWorker>(*db_, *reactor_, directory + "/ingest")) {}

RocksDbStorage::~RocksDbStorage() {
  log_writer_.reset();  // writes what it holds first
  worker_.reset();  // and its jobs
  if (db_ != nullptr) db_->Close();
}

uint64_t RocksDbStorage::LoadBytes() const {
  uint64_t live = 0;
  uint64_t memtables = 0;
  const bool known = db_->GetIntProperty(rocksdb::DB::Properties::kEstimateLiveDataSize, &live) &&
                     db_->GetIntProperty(rocksdb::DB::Properties::kCurSizeAllMemTables, &memtables);
  CHARYBDIS_ASSERT(known);  // properties every RocksDB has
  return live + memtables;
}

void RocksDbStorage::Apply(WriteBatch batch, Durability durability, WriteDone done) {
  const bool sync = durability == Durability::kSynced && !periodic_;
  if (sync || with_log_writer_ > 0) {
    CHARYBDIS_ASSERT(!periodic_);
    with_log_writer_++;
    log_writer_->Write(std::move(batch), sync, [this, done = std::move(done)](absl::Status status) {
      CHARYBDIS_ASSERT(with_log_writer_ > 0);
      with_log_writer_--;
      done(std::move(status));
    });
    return;
  }
  // Nothing ahead of it: written here, visible at once, durable with the
  // next fsync (the next synced write's, or PERIODIC's timer).
  rocksdb::WriteBatch rocks_batch;
  AppendTo(batch, rocks_batch);
  absl::Status status = ToStatus(db_->Write(rocksdb::WriteOptions(), &rocks_batch));
  reactor_->Post([done = std::move(done), status = std::move(status)] { done(status); });
}

void RocksDbStorage::Ingest(WriteBatch puts, WriteDone done) { worker_->Ingest(std::move(puts), std::move(done)); }

void RocksDbStorage::Compact(WriteDone done) { worker_->Compact(std::move(done)); }

void RocksDbStorage::Get(std::string key, GetDone done) {
  std::string value;
  const rocksdb::Status status = db_->Get(rocksdb::ReadOptions(), key, &value);
  absl::StatusOr<std::optional<std::string>> result;
  if (status.ok()) {
    result = std::optional<std::string>(std::move(value));
  } else if (status.IsNotFound()) {
    result = std::optional<std::string>();
  } else {
    result = ToStatus(status);
  }
  reactor_->Post([done = std::move(done), result = std::move(result)] { done(result); });
}

void RocksDbStorage::Scan(std::string begin, std::string end, size_t limit, ScanDone done) {
  ScanRanges({ScanRange{std::move(begin), std::move(end), limit}},
             [done = std::move(done)](absl::StatusOr<std::vector<std::vector<KeyValue>>> ranges) {
               if (!ranges.ok()) return done(ranges.status());
               done(std::move(ranges->front()));
             });
}

void RocksDbStorage::ScanRanges(std::vector<ScanRange> ranges, ScanRangesDone done) {
  std::vector<std::vector<KeyValue>> read(ranges.size());
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  for (size_t i = 0; i < ranges.size() && it->status().ok(); i++) {
    const ScanRange& range = ranges[i];
    for (it->Seek(range.begin); it->Valid() && read[i].size() < range.limit; it->Next()) {
      if (!range.end.empty() && it->key().compare(range.end) >= 0) break;
      read[i].push_back(KeyValue{it->key().ToString(), it->value().ToString()});
    }
  }
  absl::StatusOr<std::vector<std::vector<KeyValue>>> result = std::move(read);
  if (!it->status().ok()) result = ToStatus(it->status());
  reactor_->Post([done = std::move(done), result = std::move(result)] { done(result); });
}

}  // namespace charybdis::node
