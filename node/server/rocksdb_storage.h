#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/env/reactor.h"
#include "core/env/storage.h"
#include "node/server/log_writer.h"
#include "node/server/storage_worker.h"
#include "proto/durability.pb.h"

namespace rocksdb {
class DB;
class Env;
struct Options;
}  // namespace rocksdb

namespace charybdis::node {

// One shard's storage: a RocksDB instance in its own directory, holding the
// shard's data, Paxos state and hints (core/data/storage_codec.h keys).
// Reads and unsynced writes run on the calling shard's thread; synced
// writes (GROUP) go to the shard's log writer, which shares one fsync
// among all those queued while the previous one ran, so the shard thread
// never waits for an fsync. A write issued while earlier ones are with the
// log writer queues behind them: writes apply in order, and a synced
// write makes every earlier one durable, as the interface promises.
// Callbacks are posted to the shard's reactor, never run inside the call.
class RocksDbStorage final : public Storage {
 public:
  // The options a shard's instance opens with (what the benchmark's
  // measures of RocksDB must use too).
  static rocksdb::Options ShardOptions();

  // Opens (creating if needed) the database in `directory`, on `env`
  // (null: the default one). Refuses one of another storage format.
  static absl::StatusOr<std::unique_ptr<RocksDbStorage>> Open(const std::string& directory,
                                                             Reactor* reactor,
                                                             const CommitlogSync& sync,
                                                             rocksdb::Env* env = nullptr);
  ~RocksDbStorage() override;

  void Apply(WriteBatch batch, Durability durability, WriteDone done) override;
  void Get(std::string key, GetDone done) override;
  void Scan(std::string begin, std::string end, size_t limit, ScanDone done) override;
  // Every range through one iterator, whose implicit snapshot they share.
  void ScanRanges(std::vector<ScanRange> ranges, ScanRangesDone done) override;
  // On the shard's storage worker, under `directory`/ingest.
  void Ingest(WriteBatch puts, WriteDone done) override;
  // On the shard's storage worker, like an ingestion.
  void Compact(WriteDone done) override;

  // How many fsyncs the shard's synced writes shared (any thread).
  LogWriter::SyncCounts sync_counts() const { return log_writer_->sync_counts(); }
  // RocksDB's estimate of the shard's live data, and its memtables (any
  // thread): nodetool status's "Load".
  uint64_t LoadBytes() const;

 private:
  // Refuses a store of another storage format (storage_codec::kFormatKey)
  // and marks an empty one with this build's.
  static absl::Status CheckFormat(rocksdb::DB& db, const std::string& directory);
  RocksDbStorage(std::unique_ptr<rocksdb::DB> db, Reactor* reactor, const CommitlogSync& sync,
                 const std::string& directory);

  std::unique_ptr<rocksdb::DB> db_;
  Reactor* reactor_;
  const bool periodic_;
  // Writes with the log writer whose callbacks have not run (shard thread
  // only): while any are, later writes queue behind them.
  uint64_t with_log_writer_ = 0;
  std::unique_ptr<LogWriter> log_writer_;  // after db_: stops first
  std::unique_ptr<StorageWorker> worker_;  // likewise
};

}  // namespace charybdis::node
