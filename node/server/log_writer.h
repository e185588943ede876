#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "core/env/reactor.h"
#include "core/env/storage.h"
#include "proto/durability.pb.h"

namespace rocksdb {
class DB;
class Status;
class WriteBatch;
}  // namespace rocksdb

namespace charybdis::node {

// A shard's log writer: the one thread that waits for fsyncs, so the
// shard's own thread never does (docs/durability.md).
//
// GROUP: the shard hands it synced writes (and any write issued behind
// one). Every write queued while an fsync runs goes into the next one:
// one RocksDB write with sync, of all their operations in order, so each
// write is atomic and none is visible before it is durable, as on the
// simulated disk. Their callbacks then run on the shard's reactor, in
// order.
//
// PERIODIC: writes never come here. It fsyncs the WAL every period_ms.
class LogWriter {
 public:
  using Done = std::function<void(absl::Status)>;

  // What the writer has done so far: `synced_writes` shared `syncs`
  // fsyncs (GROUP: one per group holding a synced write; PERIODIC: one
  // per tick).
  struct SyncCounts {
    uint64_t synced_writes = 0;
    uint64_t syncs = 0;
  };

  LogWriter(rocksdb::DB& db, Reactor& reactor, const CommitlogSync& sync);
  // Writes what is still queued, then stops.
  ~LogWriter();
  LogWriter(const LogWriter&) = delete;
  LogWriter& operator=(const LogWriter&) = delete;

  // GROUP only. `sync`: durable before `done`; else written with the
  // group (a write queued behind a synced one keeps its place).
  void Write(WriteBatch batch, bool sync, Done done);

  // Any thread.
  SyncCounts sync_counts() const { return {synced_writes_.load(), syncs_.load()}; }

 private:
  struct Queued {
    WriteBatch batch;
    bool sync;
    Done done;
  };

  void GroupLoop();
  void PeriodicLoop();
  void WriteGroup(std::vector<Queued>& group);

  rocksdb::DB& db_;
  Reactor& reactor_;
  const std::chrono::milliseconds period_;  // PERIODIC; 0 for GROUP
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Queued> queue_;
  bool stopping_ = false;
  std::atomic<uint64_t> synced_writes_{0};
  std::atomic<uint64_t> syncs_{0};
  std::thread thread_;
};

// The rocksdb::Status as ours ("rocksdb: ..." when it failed).
absl::Status ToStatus(const rocksdb::Status& status);

// Appends the batch's puts and deletes, in order, to a RocksDB batch.
void AppendTo(const WriteBatch& batch, rocksdb::WriteBatch& rocks_batch);

}  // namespace charybdis::node
