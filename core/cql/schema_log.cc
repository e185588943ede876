#include "core/cql/schema_log.h"

#include "core/assert.h"
#include "core/cql/bootstrap.h"
#include "core/data/big_endian.h"

namespace charybdis::cql {

std::string SchemaLogKey(uint64_t sequence) {
  std::string key;
  AppendBigEndian(key, sequence, 8);
  return key;
}

uint64_t SchemaLogSequence(std::string_view key) { return key.size() == 8 ? ReadBigEndian(key, 8) : 0; }

SchemaLog::SchemaLog(std::shared_ptr<const Schema> bootstrap, std::map<std::string, uint32_t> replication)
    : replication_(std::move(replication)) {
  CHARYBDIS_ASSERT(bootstrap != nullptr);
  SetSchema(std::move(bootstrap));
}

absl::Status SchemaLog::ApplyTo(const SchemaLogEntry& entry, uint64_t sequence, Schema& schema) const {
  std::string keyspace = entry.keyspace;
  return ApplySchemaStatement(entry.statement, replication_, sequence, schema, keyspace);
}

absl::StatusOr<bool> SchemaLog::Check(const SchemaLogEntry& entry) const {
  Schema after = *schema_;
  if (absl::Status applied = ApplyTo(entry, sequence() + 1, after); !applied.ok()) return applied;
  return after.Version() != version_;
}

void SchemaLog::Append(SchemaLogEntry entry) {
  auto after = std::make_shared<Schema>(*schema_);
  const bool applied = ApplyTo(entry, sequence() + 1, *after).ok();
  entries_.push_back(std::move(entry));
  if (applied) SetSchema(std::move(after));
}

void SchemaLog::SetSchema(std::shared_ptr<const Schema> schema) {
  schema_ = std::move(schema);
  version_ = schema_->Version();
  storage_tables_ = StorageTables(*schema_);
  storage_tables_[kSchemaLogTable] = {kSchemaLogKeyspaceColumn, kSchemaLogStatementColumn};
}

}  // namespace charybdis::cql
