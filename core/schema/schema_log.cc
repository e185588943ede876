#include "core/schema/schema_log.h"

#include "core/cql/parser.h"
#include "core/env/assert.h"
#include "core/schema/bootstrap.h"
#include "core/data/big_endian.h"

namespace charybdis::cql {

std::string SchemaLogKey(uint64_t sequence) {
  std::string key;
  AppendBigEndian(key, sequence, 8);
  CHARYBDIS_ASSERT(key.size() == 8);
  return key;
}

uint64_t SchemaLogSequence(std::string_view key) { return key.size() == 8 ? ReadBigEndian(key, 8) : 0; }

SchemaLog::SchemaLog(std::shared_ptr<const Schema> bootstrap, std::shared_ptr<const TokenRing> cluster_ring)
    : datacenters_(DatacentersOf(cluster_ring->layout())),
      cluster_replication_{"", 0, cluster_ring->layout().replication} {
  CHARYBDIS_ASSERT(bootstrap != nullptr);
  SetSchema(std::move(bootstrap));
}

const TableReplication& SchemaLog::ReplicationOf(const std::string& storage_table) const {
  auto it = table_replications_.find(storage_table);
  return it == table_replications_.end() ? cluster_replication_ : it->second;
}

std::map<std::string, TableReplication> SchemaLog::Replications() const {
  std::map<std::string, TableReplication> replications{{"the cluster", cluster_replication_}};
  for (const auto& [name, keyspace] : schema_->keyspaces()) {
    if (!IsReplicatedStrategy(keyspace.replication.at("class"))) continue;
    replications.emplace("keyspace " + name,
                         TableReplication{name, keyspace.created_at, ReplicationConfigOf(keyspace.replication)});
  }
  CHARYBDIS_ASSERT(!replications.empty());
  return replications;
}

std::map<std::string, TableReplication> SchemaLog::TablesPlacedByToken() const {
  std::map<std::string, TableReplication> tables = table_replications_;
  tables.emplace(kSchemaLogTable, cluster_replication_);
  return tables;
}

absl::Status SchemaLog::ApplyTo(const SchemaLogEntry& entry, uint64_t sequence, const Datacenters* fits,
                                Schema& schema) const {
  std::string keyspace = entry.keyspace;
  return ApplySchemaStatement(entry.statement, datacenters_, fits, sequence, schema, keyspace);
}

absl::StatusOr<bool> SchemaLog::Check(const SchemaLogEntry& entry, const Datacenters& datacenters) const {
  Schema after = *schema_;
  if (absl::Status applied = ApplyTo(entry, sequence() + 1, &datacenters, after); !applied.ok()) return applied;
  return after.Version() != version_;
}

std::optional<SchemaLog::ReplicationChange> SchemaLog::ReplicationChangeOf(const SchemaLogEntry& entry) const {
  absl::StatusOr<ParsedStatement> parsed = Parse(entry.statement);
  CHARYBDIS_ASSERT(parsed.ok());  // Check took it
  const auto* alter = std::get_if<AlterKeyspace>(&parsed->statement);
  if (alter == nullptr || alter->replication.empty()) return std::nullopt;
  Schema after = *schema_;
  CHARYBDIS_ASSERT(ApplyTo(entry, sequence() + 1, nullptr, after).ok());
  const Keyspace& before_keyspace = *schema_->FindKeyspace(alter->name);
  const Keyspace& after_keyspace = *after.FindKeyspace(alter->name);
  if (before_keyspace.replication == after_keyspace.replication) return std::nullopt;
  // User keyspaces are Simple or NetworkTopology, both placed by the ring.
  CHARYBDIS_ASSERT(IsReplicatedStrategy(before_keyspace.replication.at("class")));
  return ReplicationChange{
      TableReplication{alter->name, before_keyspace.created_at, ReplicationConfigOf(before_keyspace.replication)},
      ReplicationConfigOf(after_keyspace.replication)};
}

void SchemaLog::Append(SchemaLogEntry entry) {
  auto after = std::make_shared<Schema>(*schema_);
  // Checked when proposed; applied alike on every node, whatever its
  // topology now.
  const bool applied = ApplyTo(entry, sequence() + 1, nullptr, *after).ok();
  entries_.push_back(std::move(entry));
  if (applied) SetSchema(std::move(after));
}

void SchemaLog::SetSchema(std::shared_ptr<const Schema> schema) {
  CHARYBDIS_ASSERT(schema != nullptr);
  schema_ = std::move(schema);
  version_ = schema_->Version();
  const std::map<std::string, std::set<std::string>> before = std::move(storage_tables_);
  storage_tables_ = StorageTables(*schema_);
  storage_tables_[kSchemaLogTable] = {kSchemaLogKeyspaceColumn, kSchemaLogStatementColumn};
  for (const auto& [table, columns] : before) {
    if (!storage_tables_.count(table)) dropped_storage_tables_.insert(table);
  }
  table_replications_.clear();
  for (const auto& [name, table] : schema_->tables()) {
    CHARYBDIS_ASSERT(schema_->FindKeyspace(table.keyspace) != nullptr);  // a table's keyspace exists
    const Keyspace& keyspace = *schema_->FindKeyspace(table.keyspace);
    if (!IsReplicatedStrategy(keyspace.replication.at("class"))) continue;
    table_replications_[table.storage] =
        TableReplication{keyspace.name, keyspace.created_at, ReplicationConfigOf(keyspace.replication)};
  }
}

}  // namespace charybdis::cql
