#include "node/server/storage_worker.h"

#include <pthread.h>
#include <rocksdb/db.h>
#include <rocksdb/sst_file_writer.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "node/server/log_writer.h"

namespace charybdis::node {

absl::Status WriteAndIngestSst(rocksdb::DB& db, const std::string& path, const WriteBatch& puts) {
  CHARYBDIS_ASSERT(!puts.operations.empty());  // RocksDB refuses an empty file
  // The shard's bytes_per_sync: the file is written back as it grows, so
  // its final sync does not hold up the log writer's fsyncs for long.
  rocksdb::SstFileWriter writer(rocksdb::EnvOptions(db.GetDBOptions()), db.GetOptions());
  rocksdb::Status status = writer.Open(path);
  for (auto it = puts.operations.begin(); status.ok() && it != puts.operations.end(); ++it) {
    CHARYBDIS_ASSERT(it->value.has_value());  // puts only
    status = writer.Put(it->key, *it->value);  // refuses keys out of order
  }
  if (status.ok()) status = writer.Finish();
  if (status.ok()) {
    // An ingestion stops the shard's writes while it runs, flushing the
    // memtable first if the file overlaps it (measured: up to 0.9 s);
    // flushed here, off the writers' path, what is left is a few writes.
    rocksdb::FlushOptions flush;
    flush.allow_write_stall = true;
    status = db.Flush(flush);
  }
  if (status.ok()) {
    rocksdb::IngestExternalFileOptions options;
    options.move_files = true;
    status = db.IngestExternalFile({path}, options);
  }
  std::error_code ignored;
  std::filesystem::remove(path, ignored);  // moved in already, or failed
  return ToStatus(status);
}

StorageWorker::StorageWorker(rocksdb::DB& db, Reactor& reactor, std::string directory)
    : db_(db), reactor_(reactor), directory_(std::move(directory)) {
  std::filesystem::remove_all(directory_);
  std::filesystem::create_directories(directory_);
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "storage-worker");
    Loop();
  });
}

StorageWorker::~StorageWorker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void StorageWorker::Ingest(WriteBatch puts, Done done) {
  Enqueue(
      [this, puts = std::move(puts)] {
        if (puts.operations.empty()) return absl::OkStatus();
        return WriteAndIngestSst(db_, absl::StrCat(directory_, "/", ++files_, ".sst"), puts);
      },
      std::move(done));
}

void StorageWorker::Compact(Done done) {
  Enqueue(
      [this] {
        rocksdb::CompactRangeOptions options;
        // The bottom level is rewritten too, even with nothing above it:
        // only there do deleted keys leave the files.
        options.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
        return ToStatus(db_.CompactRange(options, nullptr, nullptr));
      },
      std::move(done));
}

void StorageWorker::Enqueue(std::function<absl::Status()> job, Done done) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    CHARYBDIS_ASSERT(!stopping_);
    queue_.push_back(Queued{std::move(job), std::move(done)});
  }
  wake_.notify_one();
}

void StorageWorker::Loop() {
  std::vector<Queued> taken;
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left to run
    taken.swap(queue_);
    lock.unlock();
    for (Queued& queued : taken) {
      absl::Status status = queued.job();
      reactor_.Post([done = std::move(queued.done), status = std::move(status)] { done(status); });
    }
    taken.clear();
    lock.lock();
  }
}

}  // namespace charybdis::node
