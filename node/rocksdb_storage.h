#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/reactor.h"
#include "core/storage.h"

namespace rocksdb {
class DB;
}

namespace charybdis::node {

// One shard's storage: a RocksDB instance in its own directory, holding the
// shard's data, Paxos state and hints (core/data/storage_codec.h keys).
// Operations run on the calling shard's thread; their callbacks are posted
// to its reactor, so they never run inside the call. A synced write is a
// RocksDB write with sync (WAL fsync'd), which also makes every earlier
// unsynced write durable, as the interface promises.
class RocksDbStorage final : public Storage {
 public:
  // Opens (creating if needed) the database in `directory`.
  static absl::StatusOr<std::unique_ptr<RocksDbStorage>> Open(const std::string& directory,
                                                             Reactor* reactor);
  ~RocksDbStorage() override;

  void Apply(WriteBatch batch, Durability durability, WriteDone done) override;
  void Get(std::string key, GetDone done) override;
  void Scan(std::string begin, std::string end, size_t limit, ScanDone done) override;

 private:
  RocksDbStorage(std::unique_ptr<rocksdb::DB> db, Reactor* reactor);

  std::unique_ptr<rocksdb::DB> db_;
  Reactor* reactor_;
};

}  // namespace charybdis::node
