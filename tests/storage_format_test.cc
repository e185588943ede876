// A node's RocksDB store records its storage format (core/data/
// storage_codec.h), and a build refuses a store of another layout rather
// than read its keys as corrupt and drop them.

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <deque>
#include <filesystem>

#include "core/env/commitlog_sync.h"
#include "core/data/storage_codec.h"
#include "node/server/rocksdb_storage.h"

namespace charybdis::node {
namespace {

// Runs nothing: opening a store posts no work.
class IdleReactor final : public Reactor {
 public:
  void Post(std::function<void()> fn) override { posted_.push_back(std::move(fn)); }

 private:
  std::deque<std::function<void()>> posted_;
};

class StorageFormatTest : public ::testing::Test {
 protected:
  StorageFormatTest() : directory_(std::filesystem::path(::testing::TempDir()) / "storage_format_test") {
    std::filesystem::remove_all(directory_);
  }

  absl::Status Open() { return RocksDbStorage::Open(directory_, &reactor_, CommitlogSync()).status(); }

  // Writes `key` straight into the store, as another build would have.
  void WriteRaw(const std::string& key, const std::string& value) {
    rocksdb::Options options;
    options.create_if_missing = true;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(options, directory_, &db).ok());
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), key, value).ok());
    delete db;
  }

  std::string directory_;
  IdleReactor reactor_;
};

TEST_F(StorageFormatTest, AnEmptyStoreTakesThisBuildsFormatAndOpensAgain) {
  ASSERT_TRUE(Open().ok());
  ASSERT_TRUE(Open().ok());
}

// Format 2 holds no key format 3 reads differently: it opens, and is
// marked 3 from then on.
TEST_F(StorageFormatTest, AStoreOfTheFormatBeforeRangeTombstonesOpensAsThisOne) {
  WriteRaw(storage_codec::kFormatKey, storage_codec::kUpgradableFormat);
  ASSERT_TRUE(Open().ok());
  rocksdb::DB* db = nullptr;
  ASSERT_TRUE(rocksdb::DB::OpenForReadOnly(rocksdb::Options(), directory_, &db).ok());
  std::string format;
  EXPECT_TRUE(db->Get(rocksdb::ReadOptions(), storage_codec::kFormatKey, &format).ok());
  delete db;
  EXPECT_EQ(format, storage_codec::kFormatVersion);
}

TEST_F(StorageFormatTest, AStoreOfAnEarlierLayoutIsRefusedNotDropped) {
  WriteRaw("d-an-old-data-key", "value");
  const absl::Status opened = Open();
  EXPECT_EQ(opened.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(opened.message().find("empty data directory"), std::string::npos) << opened;
}

TEST_F(StorageFormatTest, AStoreOfAnotherFormatIsRefused) {
  WriteRaw(storage_codec::kFormatKey, "99");
  const absl::Status opened = Open();
  EXPECT_EQ(opened.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(opened.message().find("storage format 99"), std::string::npos) << opened;
}

}  // namespace
}  // namespace charybdis::node
