#pragma once

// RocksDB preallocates each WAL file with FALLOC_FL_KEEP_SIZE, so every
// append grows the file and every fdatasync must also write the inode's
// new size: on this machine's disk that made a synced write twice an
// fdatasync of a file whose size is already set (docs/durability.md,
// "The WAL's layout"). This file system has RocksDB preallocate WAL files
// with their size set instead. RocksDB trims a WAL to its length when it
// closes it; after a crash the zeroed tail is what RocksDB's log format
// reserves zero records for (preallocated files), and recovery skips it.

#include <memory>

#include "rocksdb/file_system.h"

namespace charybdis::node {

class SizedWalFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  explicit SizedWalFileSystem(std::shared_ptr<rocksdb::FileSystem> target) : FileSystemWrapper(std::move(target)) {}

  const char* Name() const override { return "CharybdisSizedWalFileSystem"; }

  rocksdb::FileOptions OptimizeForLogWrite(const rocksdb::FileOptions& options,
                                           const rocksdb::DBOptions& db_options) const override {
    rocksdb::FileOptions optimized = target()->OptimizeForLogWrite(options, db_options);
    optimized.fallocate_with_keep_size = false;
    return optimized;
  }
};

}  // namespace charybdis::node
