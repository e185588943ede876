#include "node/server/power_loss_fs.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"

namespace charybdis::node {

namespace {

namespace fs = std::filesystem;

// A writable file whose every sync is noted with the length it made durable.
class JournaledFile final : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  JournaledFile(std::unique_ptr<rocksdb::FSWritableFile> file, std::string path,
                JournalingFileSystem& journal)
      : FSWritableFileOwnerWrapper(std::move(file)), path_(std::move(path)), journal_(journal) {}

  rocksdb::IOStatus Sync(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
    return Noted(target()->Sync(options, dbg), options, dbg);
  }
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
    return Noted(target()->Fsync(options, dbg), options, dbg);
  }

 private:
  rocksdb::IOStatus Noted(rocksdb::IOStatus synced, const rocksdb::IOOptions& options,
                          rocksdb::IODebugContext* dbg) {
    if (synced.ok()) journal_.Note(absl::StrCat("synced ", target()->GetFileSize(options, dbg), " ", path_));
    return synced;
  }

  std::string path_;
  JournalingFileSystem& journal_;
};

}  // namespace

std::string PowerLossJournalPath(const std::string& data_directory) {
  return (fs::path(data_directory) / "power-loss-journal").string();
}

absl::StatusOr<std::shared_ptr<JournalingFileSystem>> JournalingFileSystem::Open(
    const std::string& journal_path, std::shared_ptr<rocksdb::FileSystem> target) {
  const int fd = open(journal_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(journal_path, ": cannot open the power-loss journal: ", std::strerror(errno)));
  }
  return std::shared_ptr<JournalingFileSystem>(new JournalingFileSystem(fd, std::move(target)));
}

JournalingFileSystem::JournalingFileSystem(int journal_fd, std::shared_ptr<rocksdb::FileSystem> target)
    : FileSystemWrapper(std::move(target)), journal_fd_(journal_fd) {}

JournalingFileSystem::~JournalingFileSystem() { close(journal_fd_); }

void JournalingFileSystem::Note(const std::string& record) {
  const std::string line = record + "\n";
  std::lock_guard<std::mutex> lock(mutex_);
  // One write per record: the journal reaches the OS before the sync it
  // notes is answered, so it survives the SIGKILL of a power cut.
  const ssize_t written = write(journal_fd_, line.data(), line.size());
  CHARYBDIS_ASSERT(written == static_cast<ssize_t>(line.size()));
}

void JournalingFileSystem::Track(const std::string& path, std::unique_ptr<rocksdb::FSWritableFile>* file) {
  *file = std::make_unique<JournaledFile>(std::move(*file), path, *this);
}

rocksdb::IOStatus JournalingFileSystem::NewWritableFile(const std::string& path,
                                                        const rocksdb::FileOptions& options,
                                                        std::unique_ptr<rocksdb::FSWritableFile>* file,
                                                        rocksdb::IODebugContext* dbg) {
  rocksdb::IOStatus status = target()->NewWritableFile(path, options, file, dbg);
  if (!status.ok()) return status;
  Note(absl::StrCat("created ", path));
  Track(path, file);
  return status;
}

rocksdb::IOStatus JournalingFileSystem::ReopenWritableFile(const std::string& path,
                                                           const rocksdb::FileOptions& options,
                                                           std::unique_ptr<rocksdb::FSWritableFile>* file,
                                                           rocksdb::IODebugContext* dbg) {
  rocksdb::IOStatus status = target()->ReopenWritableFile(path, options, file, dbg);
  if (status.ok()) Track(path, file);
  return status;
}

rocksdb::IOStatus JournalingFileSystem::ReuseWritableFile(const std::string& path, const std::string& old_path,
                                                          const rocksdb::FileOptions& options,
                                                          std::unique_ptr<rocksdb::FSWritableFile>* file,
                                                          rocksdb::IODebugContext* dbg) {
  rocksdb::IOStatus status = target()->ReuseWritableFile(path, old_path, options, file, dbg);
  if (!status.ok()) return status;
  Note(absl::StrCat("deleted ", old_path));
  Note(absl::StrCat("created ", path));
  Track(path, file);
  return status;
}

rocksdb::IOStatus JournalingFileSystem::RenameFile(const std::string& from, const std::string& to,
                                                   const rocksdb::IOOptions& options,
                                                   rocksdb::IODebugContext* dbg) {
  rocksdb::IOStatus status = target()->RenameFile(from, to, options, dbg);
  // The path follows one record per line, so it may hold spaces; a rename
  // takes two lines.
  if (status.ok()) {
    Note(absl::StrCat("renamed-from ", from));
    Note(absl::StrCat("renamed-to ", to));
  }
  return status;
}

rocksdb::IOStatus JournalingFileSystem::DeleteFile(const std::string& path, const rocksdb::IOOptions& options,
                                                   rocksdb::IODebugContext* dbg) {
  rocksdb::IOStatus status = target()->DeleteFile(path, options, dbg);
  if (status.ok()) Note(absl::StrCat("deleted ", path));
  return status;
}

absl::StatusOr<DroppedData> DropUnsyncedData(const std::string& data_directory) {
  const std::string journal_path = PowerLossJournalPath(data_directory);
  std::ifstream journal(journal_path);
  if (!journal) return DroppedData{};
  // Each tracked file's synced length (0: created, never synced).
  std::map<std::string, uint64_t> synced;
  std::string line, renamed_from;
  while (std::getline(journal, line)) {
    const size_t space = line.find(' ');
    if (space == std::string::npos) continue;  // a torn last line
    const std::string kind = line.substr(0, space);
    const std::string rest = line.substr(space + 1);
    if (kind == "created") {
      synced[rest] = 0;
    } else if (kind == "synced") {
      const size_t second = rest.find(' ');
      if (second == std::string::npos) continue;
      synced[rest.substr(second + 1)] = std::stoull(rest.substr(0, second));
    } else if (kind == "deleted") {
      synced.erase(rest);
    } else if (kind == "renamed-from") {
      renamed_from = rest;
    } else if (kind == "renamed-to") {
      // A file from an earlier life counts as durable: so does its new name.
      if (synced.count(renamed_from)) {
        synced[rest] = synced[renamed_from];
        synced.erase(renamed_from);
      } else {
        synced.erase(rest);
      }
    }
  }
  journal.close();
  DroppedData dropped;
  for (const auto& [path, length] : synced) {
    std::error_code error;
    const uint64_t size = fs::file_size(path, error);
    if (error || size <= length) continue;
    fs::resize_file(path, length, error);
    if (error) return absl::InternalError(absl::StrCat(path, ": cannot cut back: ", error.message()));
    dropped.files_cut++;
    dropped.bytes_dropped += size - length;
  }
  // What is left is all synced: the next life starts a fresh journal.
  fs::remove(journal_path);
  return dropped;
}

}  // namespace charybdis::node
