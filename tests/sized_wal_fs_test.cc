#include "node/server/sized_wal_fs.h"

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "rocksdb/db.h"
#include "rocksdb/env.h"

namespace charybdis::node {
namespace {

namespace fs = std::filesystem;

constexpr int kKeys = 100;

std::string FreshDirectory(const std::string& name) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  fs::remove_all(path);
  return path;
}

std::unique_ptr<rocksdb::Env> SizedEnv() {
  return rocksdb::NewCompositeEnv(std::make_shared<SizedWalFileSystem>(rocksdb::FileSystem::Default()));
}

std::unique_ptr<rocksdb::DB> OpenDb(const std::string& directory, rocksdb::Env* env) {
  rocksdb::Options options;
  options.create_if_missing = true;
  if (env != nullptr) options.env = env;
  rocksdb::DB* db = nullptr;
  const rocksdb::Status status = rocksdb::DB::Open(options, directory, &db);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return std::unique_ptr<rocksdb::DB>(db);
}

void PutSynced(rocksdb::DB& db) {
  rocksdb::WriteOptions synced;
  synced.sync = true;
  for (int i = 0; i < kKeys; i++) {
    ASSERT_TRUE(db.Put(synced, "key" + std::to_string(i), std::string(100, 'v')).ok());
  }
}

// The size of the directory's one WAL file.
uint64_t WalSize(const std::string& directory) {
  uint64_t size = 0;
  int wals = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory)) {
    if (entry.path().extension() != ".log") continue;
    size = entry.file_size();
    wals++;
  }
  EXPECT_EQ(wals, 1);
  return size;
}

TEST(SizedWalFileSystemTest, TheLiveWalHasItsPreallocatedSizeSet) {
  const std::unique_ptr<rocksdb::Env> env = SizedEnv();
  const std::string sized = FreshDirectory("sized");
  const std::string plain = FreshDirectory("plain");
  std::unique_ptr<rocksdb::DB> sized_db = OpenDb(sized, env.get());
  std::unique_ptr<rocksdb::DB> plain_db = OpenDb(plain, nullptr);
  PutSynced(*sized_db);
  PutSynced(*plain_db);
  // RocksDB's own layout grows the file with each append (its space is
  // preallocated beyond the size); ours has the whole preallocation as its
  // size, so a synced append does not change it.
  EXPECT_LT(WalSize(plain), 64u << 10);
  EXPECT_GE(WalSize(sized), 1u << 20);
}

TEST(SizedWalFileSystemTest, AWalLeftWithItsZeroedTailRecoversEverySyncedWrite) {
  const std::unique_ptr<rocksdb::Env> env = SizedEnv();
  const std::string live = FreshDirectory("live");
  const std::string crashed = FreshDirectory("crashed");
  std::unique_ptr<rocksdb::DB> db = OpenDb(live, env.get());
  PutSynced(*db);
  // What a crash leaves: the files as they are while the DB is open, the
  // WAL untrimmed, its preallocated tail all zeros.
  fs::copy(live, crashed, fs::copy_options::recursive);
  fs::remove(fs::path(crashed) / "LOCK");
  ASSERT_GE(WalSize(crashed), 1u << 20);
  std::unique_ptr<rocksdb::DB> recovered = OpenDb(crashed, env.get());
  ASSERT_NE(recovered, nullptr);
  for (int i = 0; i < kKeys; i++) {
    std::string value;
    ASSERT_TRUE(recovered->Get(rocksdb::ReadOptions(), "key" + std::to_string(i), &value).ok()) << i;
    EXPECT_EQ(value, std::string(100, 'v'));
  }
  // And it keeps writing on top of the recovery.
  ASSERT_TRUE(recovered->Put(rocksdb::WriteOptions(), "after", "crash").ok());
}

}  // namespace
}  // namespace charybdis::node
