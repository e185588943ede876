// The power-loss journal (node/server/power_loss_fs.h) on plain files: a power cut
// keeps what was fsync'd and nothing after it.

#include "node/server/power_loss_fs.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace charybdis::node {
namespace {

namespace fs = std::filesystem;

class PowerLossFsTest : public ::testing::Test {
 protected:
  PowerLossFsTest() {
    const char* temp = std::getenv("TEST_TMPDIR");
    directory_ = (fs::path(temp != nullptr ? temp : "/tmp") / "power-loss-fs").string();
    fs::remove_all(directory_);
    fs::create_directories(directory_);
    auto opened = JournalingFileSystem::Open(PowerLossJournalPath(directory_), rocksdb::FileSystem::Default());
    EXPECT_TRUE(opened.ok()) << opened.status();
    fs_ = *opened;
  }

  std::string Path(const std::string& name) const { return (fs::path(directory_) / name).string(); }

  std::unique_ptr<rocksdb::FSWritableFile> Create(const std::string& name) {
    std::unique_ptr<rocksdb::FSWritableFile> file;
    EXPECT_TRUE(fs_->NewWritableFile(Path(name), rocksdb::FileOptions(), &file, nullptr).ok());
    return file;
  }
  void Append(rocksdb::FSWritableFile& file, const std::string& bytes) {
    EXPECT_TRUE(file.Append(bytes, rocksdb::IOOptions(), nullptr).ok());
  }
  void Sync(rocksdb::FSWritableFile& file) { EXPECT_TRUE(file.Sync(rocksdb::IOOptions(), nullptr).ok()); }
  void Close(rocksdb::FSWritableFile& file) { EXPECT_TRUE(file.Close(rocksdb::IOOptions(), nullptr).ok()); }
  std::string Contents(const std::string& name) const {
    std::ifstream in(Path(name));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::string directory_;
  std::shared_ptr<JournalingFileSystem> fs_;
};

TEST_F(PowerLossFsTest, APowerCutKeepsWhatWasSyncedAndDropsTheRest) {
  auto wal = Create("wal");
  Append(*wal, "abc");
  Sync(*wal);
  Append(*wal, "def");  // handed to the OS, not synced
  Close(*wal);
  auto never = Create("never-synced");
  Append(*never, "lost");
  Close(*never);
  EXPECT_EQ(Contents("wal"), "abcdef") << "a plain crash keeps what the OS has";
  const absl::StatusOr<DroppedData> dropped = DropUnsyncedData(directory_);
  ASSERT_TRUE(dropped.ok()) << dropped.status();
  EXPECT_EQ(Contents("wal"), "abc");
  EXPECT_EQ(Contents("never-synced"), "");
  EXPECT_EQ(dropped->files_cut, 2u);
  EXPECT_EQ(dropped->bytes_dropped, 7u);
  EXPECT_FALSE(fs::exists(PowerLossJournalPath(directory_))) << "the next life starts afresh";
}

TEST_F(PowerLossFsTest, ARenamedFileKeepsItsSyncedLengthAndADeletedOneIsForgotten) {
  auto temp = Create("CURRENT.tmp");
  Append(*temp, "MANIFEST-1\n");
  Sync(*temp);
  Close(*temp);
  ASSERT_TRUE(fs_->RenameFile(Path("CURRENT.tmp"), Path("CURRENT"), rocksdb::IOOptions(), nullptr).ok());
  auto gone = Create("old.log");
  Append(*gone, "x");
  Close(*gone);
  ASSERT_TRUE(fs_->DeleteFile(Path("old.log"), rocksdb::IOOptions(), nullptr).ok());
  const absl::StatusOr<DroppedData> dropped = DropUnsyncedData(directory_);
  ASSERT_TRUE(dropped.ok()) << dropped.status();
  EXPECT_EQ(Contents("CURRENT"), "MANIFEST-1\n");
  EXPECT_EQ(dropped->files_cut, 0u);
}

TEST_F(PowerLossFsTest, WithoutAJournalNothingIsDropped) {
  fs_.reset();
  fs::remove(PowerLossJournalPath(directory_));
  std::ofstream(Path("data")) << "kept";
  const absl::StatusOr<DroppedData> dropped = DropUnsyncedData(directory_);
  ASSERT_TRUE(dropped.ok());
  EXPECT_EQ(dropped->files_cut, 0u);
  EXPECT_EQ(Contents("data"), "kept");
}

}  // namespace
}  // namespace charybdis::node
