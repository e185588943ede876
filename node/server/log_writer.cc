#include "node/server/log_writer.h"

#include <pthread.h>
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "core/env/commitlog_sync.h"
#include "node/server/log.h"

namespace charybdis::node {

absl::Status ToStatus(const rocksdb::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("rocksdb: ", status.ToString()));
}

void AppendTo(const WriteBatch& batch, rocksdb::WriteBatch& rocks_batch) {
  for (const WriteBatch::Operation& operation : batch.operations) {
    operation.value ? rocks_batch.Put(operation.key, *operation.value) : rocks_batch.Delete(operation.key);
  }
}

LogWriter::LogWriter(rocksdb::DB& db, Reactor& reactor, const CommitlogSync& sync)
    : db_(db), reactor_(reactor), period_(SyncPeriodMs(sync)) {
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "log-writer");
    period_.count() > 0 ? PeriodicLoop() : GroupLoop();
  });
}

LogWriter::~LogWriter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void LogWriter::Write(WriteBatch batch, bool sync, Done done) {
  CHARYBDIS_ASSERT(period_.count() == 0);  // PERIODIC writes go straight to RocksDB
  {
    std::lock_guard<std::mutex> lock(mutex_);
    CHARYBDIS_ASSERT(!stopping_);
    queue_.push_back(Queued{std::move(batch), sync, std::move(done)});
  }
  wake_.notify_one();
}

void LogWriter::GroupLoop() {
  std::vector<Queued> group;
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left to write
    group.swap(queue_);
    lock.unlock();
    WriteGroup(group);
    group.clear();
    lock.lock();
  }
}

void LogWriter::WriteGroup(std::vector<Queued>& group) {
  CHARYBDIS_ASSERT(!group.empty());
  rocksdb::WriteBatch merged;
  uint64_t synced_writes = 0;
  for (const Queued& write : group) {
    if (write.sync) synced_writes++;
    AppendTo(write.batch, merged);
  }
  rocksdb::WriteOptions options;
  options.sync = synced_writes > 0;
  const absl::Status status = ToStatus(db_.Write(options, &merged));
  if (options.sync) {
    syncs_++;
    synced_writes_ += synced_writes;
  }
  // One post for the group: the callbacks run in queue order, and the
  // shard wakes once.
  std::vector<Done> dones;
  dones.reserve(group.size());
  for (Queued& write : group) dones.push_back(std::move(write.done));
  reactor_.Post([dones = std::move(dones), status] {
    for (const Done& done : dones) done(status);
  });
}

void LogWriter::PeriodicLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  auto next = std::chrono::steady_clock::now() + period_;
  while (!stopping_) {
    if (wake_.wait_until(lock, next, [this] { return stopping_; })) break;
    lock.unlock();
    if (const absl::Status synced = ToStatus(db_.SyncWAL()); !synced.ok()) {
      Log("error", "periodic commitlog sync failed", {{"error", std::string(synced.message())}});
    }
    syncs_++;
    lock.lock();
    next += period_;
  }
  lock.unlock();
  (void)db_.SyncWAL();  // a clean stop leaves nothing unsynced
}

}  // namespace charybdis::node
