// A shard's log writer on a real RocksDB (node/server/log_writer.*): synced
// writes issued while an fsync runs share the next one, each is
// acknowledged only with its own data durable, and a lone write gets an
// fsync of its own without waiting for company, and in bursts of hundreds
// each is acknowledged only once its own record is synced.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/env/commitlog_sync.h"
#include "node/server/rocksdb_storage.h"
#include "tests/thread_reactor.h"
#include "rocksdb/env.h"
#include "rocksdb/file_system.h"

namespace charybdis::node {
namespace {


// How many bytes of RocksDB's WAL files were written and how many of them
// an fsync has made durable; and for each key of a burst ("burst-NNNN"),
// where in the WAL its record ends, so that its acknowledgement can be
// held against what was synced by then.
struct WalBytes {
  static constexpr std::string_view kBurstKey = "burst-";
  static constexpr size_t kBurstKeySize = kBurstKey.size() + 4;

  std::atomic<uint64_t> written{0};
  std::atomic<uint64_t> synced{0};

  void NoteBurstKeys(std::string_view data, uint64_t offset) {
    std::lock_guard<std::mutex> lock(mutex);
    for (size_t at = data.find(kBurstKey); at != std::string_view::npos; at = data.find(kBurstKey, at + 1)) {
      if (at + kBurstKeySize <= data.size()) {
        burst_key_end.emplace(std::string(data.substr(at, kBurstKeySize)), offset + at + kBurstKeySize);
      }
    }
  }
  // Where the key's first record ends in the WAL; nullopt if not written yet.
  std::optional<uint64_t> End(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = burst_key_end.find(key);
    if (it == burst_key_end.end()) return std::nullopt;
    return it->second;
  }

  std::mutex mutex;
  std::map<std::string, uint64_t> burst_key_end;
};

// A WAL file whose syncs take 20 ms and are counted once they are done:
// long enough that an acknowledgement sent before its fsync finished is
// seen before it.
class SlowSyncWal final : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  SlowSyncWal(std::unique_ptr<rocksdb::FSWritableFile> file, WalBytes& bytes)
      : FSWritableFileOwnerWrapper(std::move(file)), bytes_(bytes) {}

  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                           rocksdb::IODebugContext* dbg) override {
    Note(data);
    return target()->Append(data, options, dbg);
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                           const rocksdb::DataVerificationInfo& info, rocksdb::IODebugContext* dbg) override {
    Note(data);
    return target()->Append(data, options, info, dbg);
  }
  rocksdb::IOStatus Sync(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
    return Counted(options, dbg, [&] { return target()->Sync(options, dbg); });
  }
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
    return Counted(options, dbg, [&] { return target()->Fsync(options, dbg); });
  }

 private:
  template <typename SyncFn>
  rocksdb::IOStatus Counted(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg, SyncFn sync) {
    const uint64_t size = target()->GetFileSize(options, dbg);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    rocksdb::IOStatus status = sync();
    if (status.ok() && size > synced_size_) {
      bytes_.synced += size - synced_size_;
      synced_size_ = size;
    }
    return status;
  }

  // One WAL file in these tests: its offsets are the WAL's.
  void Note(const rocksdb::Slice& data) {
    bytes_.NoteBurstKeys(std::string_view(data.data(), data.size()), bytes_.written);
    bytes_.written += data.size();
  }

  WalBytes& bytes_;
  uint64_t synced_size_ = 0;  // RocksDB syncs a file from one thread at a time
};

class SlowSyncFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  explicit SlowSyncFileSystem(WalBytes& bytes) : FileSystemWrapper(rocksdb::FileSystem::Default()), bytes_(bytes) {}
  const char* Name() const override { return "SlowSyncFileSystem"; }

  rocksdb::IOStatus NewWritableFile(const std::string& path, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* file,
                                    rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus status = target()->NewWritableFile(path, options, file, dbg);
    if (status.ok() && absl::EndsWith(path, ".log")) *file = std::make_unique<SlowSyncWal>(std::move(*file), bytes_);
    return status;
  }

 private:
  WalBytes& bytes_;
};

class LogWriterTest : public ::testing::Test {
 protected:
  LogWriterTest() { Open(nullptr); }

  // Reopens the storage afresh on a file system whose WAL syncs are slow.
  void OpenWithSlowSyncs() {
    slow_sync_env_ = rocksdb::NewCompositeEnv(std::make_shared<SlowSyncFileSystem>(wal_));
    Open(slow_sync_env_.get());
  }

  void Open(rocksdb::Env* env) {
    storage_.reset();
    const std::string directory = std::filesystem::path(::testing::TempDir()) / "log_writer_test";
    std::filesystem::remove_all(directory);
    auto opened = RocksDbStorage::Open(directory, &reactor_, CommitlogSync(), env);
    EXPECT_TRUE(opened.ok()) << opened.status();
    if (opened.ok()) storage_ = std::move(*opened);
  }

  // Issues a synced write of key -> "v" that counts into `acknowledged`.
  void WriteSynced(const std::string& key, int& acknowledged) {
    WriteBatch batch;
    batch.Put(key, "v");
    storage_->Apply(std::move(batch), Durability::kSynced, [&acknowledged](absl::Status status) {
      EXPECT_TRUE(status.ok()) << status;
      acknowledged++;
    });
  }

  bool Visible(const std::string& key) {
    bool found = false;
    bool answered = false;
    storage_->Get(key, [&](absl::StatusOr<std::optional<std::string>> value) {
      answered = true;
      found = value.ok() && value->has_value();
    });
    EXPECT_TRUE(reactor_.RunUntil([&] { return answered; }));
    return found;
  }

  testing::ThreadReactor reactor_;
  WalBytes wal_;
  std::unique_ptr<rocksdb::Env> slow_sync_env_;
  std::unique_ptr<RocksDbStorage> storage_;  // last: it goes before its file system
};

TEST_F(LogWriterTest, SyncedWritesIssuedTogetherShareFsyncs) {
  ASSERT_NE(storage_, nullptr);
  constexpr int kWrites = 256;
  int acknowledged = 0;
  // All issued in one go, as a shard does in one turn: the first fsync
  // starts with the first write, and the rest queue behind it.
  for (int i = 0; i < kWrites; i++) WriteSynced(absl::StrCat("key", i), acknowledged);
  ASSERT_TRUE(reactor_.RunUntil([&] { return acknowledged == kWrites; }));
  const LogWriter::SyncCounts counts = storage_->sync_counts();
  EXPECT_EQ(counts.synced_writes, uint64_t{kWrites});
  // One fsync each would be kWrites; a group per fsync is a handful.
  EXPECT_LT(counts.syncs, uint64_t{kWrites / 4}) << counts.synced_writes << " synced writes";
  EXPECT_GE(counts.syncs, 1u);
  for (int i = 0; i < kWrites; i++) EXPECT_TRUE(Visible(absl::StrCat("key", i))) << i;
}

TEST_F(LogWriterTest, ALoneSyncedWriteHasAnFsyncOfItsOwn) {
  ASSERT_NE(storage_, nullptr);
  int acknowledged = 0;
  for (int i = 0; i < 5; i++) {
    WriteSynced(absl::StrCat("alone", i), acknowledged);
    ASSERT_TRUE(reactor_.RunUntil([&] { return acknowledged == i + 1; }));
    EXPECT_TRUE(Visible(absl::StrCat("alone", i)));
  }
  const LogWriter::SyncCounts counts = storage_->sync_counts();
  EXPECT_EQ(counts.synced_writes, 5u);
  EXPECT_EQ(counts.syncs, 5u);
}

TEST_F(LogWriterTest, ASyncedWriteIsAcknowledgedOnlyOnceItsFsyncIsDone) {
  OpenWithSlowSyncs();
  ASSERT_NE(storage_, nullptr);
  int acknowledged = 0;
  for (int i = 0; i < 5; i++) {
    WriteBatch batch;
    batch.Put(absl::StrCat("durable", i), "v");
    storage_->Apply(std::move(batch), Durability::kSynced, [&](absl::Status status) {
      EXPECT_TRUE(status.ok()) << status;
      // Nothing else is in flight: all that was written is synced.
      EXPECT_GT(wal_.written.load(), 0u);
      EXPECT_EQ(wal_.synced.load(), wal_.written.load()) << "write " << i << " acknowledged before its fsync";
      acknowledged++;
    });
    ASSERT_TRUE(reactor_.RunUntil([&] { return acknowledged == i + 1; }));
  }
}

// Bursts of hundreds of writes, the next issued while the last one's
// fsyncs run, one in five unsynced: every synced write is acknowledged
// only once the WAL is synced past its own record, whichever group it
// joined, and callbacks come in the order the writes were issued.
TEST_F(LogWriterTest, BurstsOfSyncedWritesAreEachAcknowledgedOnlyOnceDurable) {
  OpenWithSlowSyncs();
  ASSERT_NE(storage_, nullptr);
  constexpr int kBursts = 3;
  constexpr int kBurstWrites = 200;
  int issued = 0;
  int acknowledged = 0;
  int synced_writes = 0;
  std::function<void()> issue_burst = [&] {
    for (int i = 0; i < kBurstWrites; i++) {
      const int number = issued++;
      const std::string key = absl::StrFormat("burst-%04d", number);
      const bool synced = number % 5 != 0;
      synced_writes += synced;
      WriteBatch batch;
      batch.Put(key, "v");
      storage_->Apply(std::move(batch), synced ? Durability::kSynced : Durability::kUnsynced,
                      [&, key, number, synced](absl::Status status) {
                        EXPECT_TRUE(status.ok()) << status;
                        EXPECT_EQ(number, acknowledged) << "acknowledged out of order";
                        acknowledged++;
                        if (synced) {
                          const std::optional<uint64_t> end = wal_.End(key);
                          ASSERT_TRUE(end.has_value()) << key << " acknowledged before it was written";
                          EXPECT_GE(wal_.synced.load(), *end) << key << " acknowledged before its fsync";
                        }
                        // The next burst arrives while this one's groups are in flight.
                        if (acknowledged % kBurstWrites == 1 && issued < kBursts * kBurstWrites) issue_burst();
                      });
    }
  };
  issue_burst();
  ASSERT_TRUE(reactor_.RunUntil([&] { return acknowledged == kBursts * kBurstWrites; }));
  const LogWriter::SyncCounts counts = storage_->sync_counts();
  EXPECT_EQ(counts.synced_writes, static_cast<uint64_t>(synced_writes));
  EXPECT_LT(counts.syncs, static_cast<uint64_t>(synced_writes / 4));
  for (int i = 0; i < kBursts * kBurstWrites; i++) EXPECT_TRUE(Visible(absl::StrFormat("burst-%04d", i))) << i;
}

TEST_F(LogWriterTest, AnUnsyncedWriteWithNothingAheadCostsNoFsync) {
  ASSERT_NE(storage_, nullptr);
  WriteBatch batch;
  batch.Put("unsynced", "v");
  bool acknowledged = false;
  storage_->Apply(std::move(batch), Durability::kUnsynced, [&](absl::Status status) {
    EXPECT_TRUE(status.ok()) << status;
    acknowledged = true;
  });
  ASSERT_TRUE(reactor_.RunUntil([&] { return acknowledged; }));
  EXPECT_TRUE(Visible("unsynced"));
  EXPECT_EQ(storage_->sync_counts().syncs, 0u);
}

}  // namespace
}  // namespace charybdis::node
