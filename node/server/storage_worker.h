#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "core/env/reactor.h"
#include "core/env/storage.h"

namespace rocksdb {
class DB;
}  // namespace rocksdb

namespace charybdis::node {

// Writes `puts` (ascending, distinct keys) to an SST file at `path` and
// ingests it into `db`, moving the file in: durable when it returns OK
// (RocksDB syncs the file and its manifest). The path is gone either way.
absl::Status WriteAndIngestSst(rocksdb::DB& db, const std::string& path, const WriteBatch& puts);

// A shard's thread for long storage jobs, so neither the shard's thread
// nor its log writer waits for one: bulk loads (Storage::Ingest: an SST
// file written and ingested; a streamed range's files are tens of MiB)
// and full compactions (Storage::Compact). Jobs run one at a time, in
// order; their callbacks run on the shard's reactor, in order.
class StorageWorker {
 public:
  using Done = std::function<void(absl::Status)>;

  // Files are written under `directory`, emptied first: what a crash left
  // there was never ingested.
  StorageWorker(rocksdb::DB& db, Reactor& reactor, std::string directory);
  // Runs what is still queued, then stops.
  ~StorageWorker();
  StorageWorker(const StorageWorker&) = delete;
  StorageWorker& operator=(const StorageWorker&) = delete;

  void Ingest(WriteBatch puts, Done done);
  // Compacts every key of the database to the bottom level, where RocksDB
  // drops deleted keys and the versions they hide, and so their space.
  void Compact(Done done);

 private:
  struct Queued {
    std::function<absl::Status()> job;
    Done done;
  };
  void Enqueue(std::function<absl::Status()> job, Done done);
  void Loop();

  rocksdb::DB& db_;
  Reactor& reactor_;
  const std::string directory_;
  uint64_t files_ = 0;  // this thread's only
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Queued> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace charybdis::node
