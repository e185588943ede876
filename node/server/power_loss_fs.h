#pragma once

// Power cuts on real nodes, after LevelDB's fault_injection_test and
// RocksDB's FaultInjectionTestFS. A node whose config sets
// power_loss_journal runs RocksDB on a file system that notes, in
// DATA/power-loss-journal, how long each file was when it was last
// fsync'd (and which files were created, renamed or deleted). The node
// writes through as usual, so SIGKILL alone loses only what a process
// crash loses. A power cut is SIGKILL followed by DropUnsyncedData, which
// cuts every file back to its last synced length: what a real power cut
// takes, since the OS page cache dies with the power.
//
// A node's start begins a fresh journal: what is on disk then counts as
// durable (the OS had time to write it back while the node was down).
// Directory entries are not modelled: a file created and never synced
// comes back empty rather than missing. A node journals on top of the WAL
// layout every node has (sized_wal_fs.h), so it syncs as a deployed one.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "rocksdb/file_system.h"

namespace charybdis::node {

class JournalingFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  // Starts the journal at `journal_path` afresh; files live on `target`.
  static absl::StatusOr<std::shared_ptr<JournalingFileSystem>> Open(const std::string& journal_path,
                                                                    std::shared_ptr<rocksdb::FileSystem> target);
  ~JournalingFileSystem() override;

  const char* Name() const override { return "CharybdisJournalingFileSystem"; }

  rocksdb::IOStatus NewWritableFile(const std::string& path, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* file,
                                    rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus ReopenWritableFile(const std::string& path, const rocksdb::FileOptions& options,
                                       std::unique_ptr<rocksdb::FSWritableFile>* file,
                                       rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus ReuseWritableFile(const std::string& path, const std::string& old_path,
                                      const rocksdb::FileOptions& options,
                                      std::unique_ptr<rocksdb::FSWritableFile>* file,
                                      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus RenameFile(const std::string& from, const std::string& to,
                               const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus DeleteFile(const std::string& path, const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override;

  // One journal record ("synced PATH LENGTH", ...), handed to the OS at
  // once (it must survive the SIGKILL that starts a power cut).
  void Note(const std::string& record);

 private:
  JournalingFileSystem(int journal_fd, std::shared_ptr<rocksdb::FileSystem> target);
  // Wraps a writable file so that its syncs are noted.
  void Track(const std::string& path, std::unique_ptr<rocksdb::FSWritableFile>* file);

  int journal_fd_;
  std::mutex mutex_;
};

// What a power cut took from one data directory.
struct DroppedData {
  uint64_t files_cut = 0;
  uint64_t bytes_dropped = 0;
};

// After the node's process is dead: cuts every file the journal in
// `data_directory` tracks back to its last synced length, then starts the
// journal afresh. No journal: nothing to drop.
absl::StatusOr<DroppedData> DropUnsyncedData(const std::string& data_directory);

// The journal's place in a data directory.
std::string PowerLossJournalPath(const std::string& data_directory);

}  // namespace charybdis::node
