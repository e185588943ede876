#include "node/rocksdb_storage.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "absl/strings/str_cat.h"

namespace charybdis::node {

namespace {

absl::Status ToStatus(const rocksdb::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("rocksdb: ", status.ToString()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<RocksDbStorage>> RocksDbStorage::Open(const std::string& directory,
                                                                    Reactor* reactor) {
  rocksdb::Options options;
  options.create_if_missing = true;
  // One small instance per shard: keep its threads and memory modest.
  options.IncreaseParallelism(1);
  options.max_background_jobs = 2;
  options.write_buffer_size = 16 << 20;
  rocksdb::DB* db = nullptr;
  const rocksdb::Status status = rocksdb::DB::Open(options, directory, &db);
  if (!status.ok()) return ToStatus(status);
  return std::unique_ptr<RocksDbStorage>(
      new RocksDbStorage(std::unique_ptr<rocksdb::DB>(db), reactor));
}

RocksDbStorage::RocksDbStorage(std::unique_ptr<rocksdb::DB> db, Reactor* reactor)
    : db_(std::move(db)), reactor_(reactor) {}

RocksDbStorage::~RocksDbStorage() {
  if (db_ != nullptr) db_->Close();
}

void RocksDbStorage::Apply(WriteBatch batch, Durability durability, WriteDone done) {
  rocksdb::WriteBatch rocks_batch;
  for (const WriteBatch::Operation& operation : batch.operations) {
    if (operation.value) {
      rocks_batch.Put(operation.key, *operation.value);
    } else {
      rocks_batch.Delete(operation.key);
    }
  }
  rocksdb::WriteOptions options;
  options.sync = durability == Durability::kSynced;
  absl::Status status = ToStatus(db_->Write(options, &rocks_batch));
  reactor_->Post([done = std::move(done), status = std::move(status)] { done(status); });
}

void RocksDbStorage::Get(std::string key, GetDone done) {
  std::string value;
  const rocksdb::Status status = db_->Get(rocksdb::ReadOptions(), key, &value);
  absl::StatusOr<std::optional<std::string>> result;
  if (status.ok()) {
    result = std::optional<std::string>(std::move(value));
  } else if (status.IsNotFound()) {
    result = std::optional<std::string>();
  } else {
    result = ToStatus(status);
  }
  reactor_->Post([done = std::move(done), result = std::move(result)] { done(result); });
}

void RocksDbStorage::Scan(std::string begin, std::string end, size_t limit, ScanDone done) {
  std::vector<KeyValue> rows;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  for (it->Seek(begin); it->Valid() && rows.size() < limit; it->Next()) {
    if (!end.empty() && it->key().compare(end) >= 0) break;
    rows.push_back(KeyValue{it->key().ToString(), it->value().ToString()});
  }
  absl::StatusOr<std::vector<KeyValue>> result = std::move(rows);
  if (!it->status().ok()) result = ToStatus(it->status());
  reactor_->Post([done = std::move(done), result = std::move(result)] { done(result); });
}

}  // namespace charybdis::node
