// A shard's RocksDB store gives back the space of deleted keys when asked
// to compact (Storage::Compact, run by `ctl compact` after its purge), and
// keeps every key that was not deleted.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/env/commitlog_sync.h"
#include "core/env/random.h"
#include "node/server/rocksdb_storage.h"
#include "tests/thread_reactor.h"

namespace charybdis::node {
namespace {


class RocksDbCompactionTest : public ::testing::Test {
 protected:
  RocksDbCompactionTest() : directory_(std::filesystem::path(::testing::TempDir()) / "rocksdb_compaction_test") {
    std::filesystem::remove_all(directory_);
    auto opened = RocksDbStorage::Open(directory_, &reactor_, CommitlogSync());
    EXPECT_TRUE(opened.ok()) << opened.status();
    storage_ = std::move(*opened);
  }

  static std::string Key(int i) { return absl::StrCat("k", 100000 + i); }
  // 100 bytes no compression shrinks, the same for a key each time.
  static std::string Value(int i) {
    Random random(i);
    std::string value;
    while (value.size() < 100) absl::StrAppend(&value, random.Next());
    return value.substr(0, 100);
  }

  // Writes or deletes keys [first, last) in synced batches.
  void Write(int first, int last, bool put) {
    for (int batch_first = first; batch_first < last; batch_first += 1000) {
      WriteBatch batch;
      for (int i = batch_first; i < std::min(last, batch_first + 1000); i++) {
        put ? batch.Put(Key(i), Value(i)) : batch.Delete(Key(i));
      }
      Await([&](Storage::WriteDone done) { storage_->Apply(std::move(batch), Durability::kSynced, done); });
    }
  }

  void Await(const std::function<void(Storage::WriteDone)>& call) {
    bool done = false;
    call([&done](absl::Status status) {
      EXPECT_TRUE(status.ok()) << status;
      done = true;
    });
    ASSERT_TRUE(reactor_.RunUntil([&done] { return done; }));
  }

  // The store's files, but for RocksDB's informational LOG files.
  uint64_t StoredBytes() const {
    uint64_t total = 0;
    for (const auto& entry : std::filesystem::directory_iterator(directory_)) {
      if (entry.is_regular_file() && entry.path().filename().string().rfind("LOG", 0) != 0) {
        total += entry.file_size();
      }
    }
    return total;
  }

  std::vector<KeyValue> ScanAll() {
    std::vector<KeyValue> rows;
    bool done = false;
    storage_->Scan("k", "l", 1000000, [&](absl::StatusOr<std::vector<KeyValue>> scanned) {
      EXPECT_TRUE(scanned.ok()) << scanned.status();
      rows = std::move(*scanned);
      done = true;
    });
    EXPECT_TRUE(reactor_.RunUntil([&done] { return done; }));
    return rows;
  }

  std::string directory_;
  testing::ThreadReactor reactor_;
  std::unique_ptr<RocksDbStorage> storage_;
};

TEST_F(RocksDbCompactionTest, DeletedKeysLeaveTheDiskAndTheOthersStay) {
  Write(0, 50000, /*put=*/true);
  Await([&](Storage::WriteDone done) { storage_->Compact(done); });  // into files
  const uint64_t written = StoredBytes();
  ASSERT_GE(written, 50000u * 50);  // decimal digits: about half their bytes' entropy
  Write(100, 50000, /*put=*/false);
  const uint64_t peak = std::max(written, StoredBytes());
  Await([&](Storage::WriteDone done) { storage_->Compact(done); });
  // 100 keys of 50000 stay: what is left is theirs and RocksDB's own.
  EXPECT_LE(StoredBytes(), peak / 20) << "peak " << peak;
  const std::vector<KeyValue> rows = ScanAll();
  ASSERT_EQ(rows.size(), 100u);
  for (int i = 0; i < 100; i++) EXPECT_EQ(rows[i], (KeyValue{Key(i), Value(i)}));
}

}  // namespace
}  // namespace charybdis::node
