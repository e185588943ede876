#include "core/cql/system_tables.h"

#include <functional>
#include <map>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "core/cql/parser.h"

namespace charybdis::cql {
namespace {

constexpr const char* kDefinitions[] = {
    "CREATE KEYSPACE system WITH replication = {'class': 'LocalStrategy'}",
    "CREATE KEYSPACE system_schema WITH replication = {'class': 'LocalStrategy'}",
    "CREATE TABLE system.local (key text PRIMARY KEY, bootstrapped text, broadcast_address inet, cluster_name text,"
    " cql_version text, data_center text, host_id uuid, listen_address inet, native_protocol_version text,"
    " partitioner text, rack text, release_version text, rpc_address inet, schema_version uuid, tokens set<text>)",
    "CREATE TABLE system.peers (peer inet PRIMARY KEY, data_center text, host_id uuid, preferred_ip inet, rack text,"
    " release_version text, rpc_address inet, schema_version uuid, tokens set<text>)",
    "CREATE TABLE system.peers_v2 (peer inet, peer_port int, data_center text, host_id uuid, native_address inet,"
    " native_port int, preferred_ip inet, preferred_port int, rack text, release_version text, schema_version uuid,"
    " tokens set<text>, PRIMARY KEY (peer, peer_port))",
    "CREATE TABLE system_schema.keyspaces (keyspace_name text PRIMARY KEY, durable_writes boolean,"
    " replication map<text, text>)",
    "CREATE TABLE system_schema.tables (keyspace_name text, table_name text, bloom_filter_fp_chance double,"
    " caching map<text, text>, comment text, compaction map<text, text>, compression map<text, text>,"
    " crc_check_chance double, dclocal_read_repair_chance double, default_time_to_live int,"
    " flags set<text>, gc_grace_seconds int, id uuid, max_index_interval int, memtable_flush_period_in_ms int,"
    " min_index_interval int, read_repair_chance double, speculative_retry text,"
    " PRIMARY KEY (keyspace_name, table_name))",
    "CREATE TABLE system_schema.columns (keyspace_name text, table_name text, column_name text,"
    " clustering_order text, column_name_bytes blob, kind text, position int, type text,"
    " PRIMARY KEY (keyspace_name, table_name, column_name))",
    "CREATE TABLE system_schema.types (keyspace_name text, type_name text, field_names list<text>,"
    " field_types list<text>, PRIMARY KEY (keyspace_name, type_name))",
    "CREATE TABLE system_schema.functions (keyspace_name text, function_name text, argument_types list<text>,"
    " argument_names list<text>, body text, called_on_null_input boolean, language text, return_type text,"
    " PRIMARY KEY (keyspace_name, function_name, argument_types))",
    "CREATE TABLE system_schema.aggregates (keyspace_name text, aggregate_name text, argument_types list<text>,"
    " final_func text, initcond text, return_type text, state_func text, state_type text,"
    " PRIMARY KEY (keyspace_name, aggregate_name, argument_types))",
    "CREATE TABLE system_schema.indexes (keyspace_name text, table_name text, index_name text, kind text,"
    " options map<text, text>, PRIMARY KEY (keyspace_name, table_name, index_name))",
    "CREATE TABLE system_schema.views (keyspace_name text, view_name text, base_table_id uuid, base_table_name text,"
    " include_all_columns boolean, where_clause text, PRIMARY KEY (keyspace_name, view_name))",
    "CREATE TABLE system_schema.triggers (keyspace_name text, table_name text, trigger_name text,"
    " options map<text, text>, PRIMARY KEY (keyspace_name, table_name, trigger_name))",
};

std::string TextSet(const std::vector<std::string>& values) { return NativeCollection(values); }

std::string TextMap(const std::map<std::string, std::string>& map) {
  return NativeMap(std::vector<std::pair<std::string, std::string>>(map.begin(), map.end()));
}

// A row from named values; columns not named are null.
class RowBuilder {
 public:
  explicit RowBuilder(const Table& table) : table_(table), row_(table.columns.size()) {}
  RowBuilder& Set(std::string_view column, std::string value) {
    const int index = table_.IndexOf(column);
    CHARYBDIS_ASSERT(index >= 0);
    CHARYBDIS_ASSERT(static_cast<size_t>(index) < row_.size());
    row_[index] = std::move(value);
    return *this;
  }
  ResultRow Take() { return std::move(row_); }

 private:
  const Table& table_;
  ResultRow row_;
};

void AddHostColumns(RowBuilder& row, const HostInfo& host, const std::string& schema_version) {
  row.Set("data_center", host.datacenter)
      .Set("rack", host.rack)
      .Set("host_id", host.host_id)
      .Set("release_version", "3.0.8")
      .Set("tokens", TextSet(host.tokens));
  if (!schema_version.empty()) row.Set("schema_version", schema_version);  // null: not heard yet
}

std::vector<ResultRow> LocalRows(const Table& table, const Schema& schema, const ClusterView& cluster) {
  RowBuilder row(table);
  AddHostColumns(row, cluster.local, schema.Version());
  row.Set("key", "local")
      .Set("bootstrapped", "COMPLETED")
      .Set("broadcast_address", cluster.local.address)
      .Set("listen_address", cluster.local.address)
      .Set("rpc_address", cluster.local.address)
      .Set("cluster_name", cluster.cluster_name)
      .Set("cql_version", "3.3.1")
      .Set("native_protocol_version", "4")
      .Set("partitioner", "org.apache.cassandra.dht.Murmur3Partitioner");
  return {row.Take()};
}

std::vector<ResultRow> PeerRows(const Table& table, const Schema& schema, const ClusterView& cluster) {
  std::vector<ResultRow> rows;
  const bool v2 = table.name == "peers_v2";
  CHARYBDIS_ASSERT(v2 || table.name == "peers");
  for (const HostInfo& peer : cluster.peers) {
    RowBuilder row(table);
    AddHostColumns(row, peer, peer.schema_version);
    row.Set("peer", peer.address).Set("preferred_ip", peer.address);
    if (v2) {
      row.Set("peer_port", NativeInt(peer.native_port))
          .Set("native_address", peer.address)
          .Set("native_port", NativeInt(peer.native_port))
          .Set("preferred_port", NativeInt(peer.native_port));
    } else {
      row.Set("rpc_address", peer.address);
    }
    rows.push_back(row.Take());
  }
  return rows;
}

std::vector<ResultRow> KeyspaceRows(const Table& table, const std::vector<const Schema*>& schemas) {
  std::vector<ResultRow> rows;
  for (const Schema* schema : schemas) {
    for (const auto& [name, keyspace] : schema->keyspaces()) {
      rows.push_back(RowBuilder(table)
                         .Set("keyspace_name", name)
                         .Set("durable_writes", NativeBoolean(true))
                         .Set("replication", TextMap(keyspace.replication))
                         .Take());
    }
  }
  return rows;
}

std::vector<ResultRow> TableRows(const Table& table, const std::vector<const Schema*>& schemas) {
  std::vector<ResultRow> rows;
  for (const Schema* schema : schemas) {
    for (const auto& [key, described] : schema->tables()) {
      rows.push_back(RowBuilder(table)
                         .Set("keyspace_name", key.first)
                         .Set("table_name", key.second)
                         .Set("id", described.id)
                         .Set("flags", TextSet({"compound"}))
                         .Set("comment", "")
                         .Set("default_time_to_live", NativeInt(0))
                         .Set("gc_grace_seconds", NativeInt(static_cast<int32_t>(described.gc.gc_grace_seconds)))
                         .Set("speculative_retry", "99PERCENTILE")
                         .Take());
    }
  }
  return rows;
}

const char* KindName(Column::Kind kind) {
  switch (kind) {
    case Column::Kind::kPartitionKey: return "partition_key";
    case Column::Kind::kClustering: return "clustering";
    case Column::Kind::kRegular: break;
  }
  return "regular";
}

std::vector<ResultRow> ColumnRows(const Table& table, const std::vector<const Schema*>& schemas) {
  std::vector<ResultRow> rows;
  for (const Schema* schema : schemas) {
    for (const auto& [key, described] : schema->tables()) {
      for (const Column& column : described.columns) {
        const bool clustering = column.kind == Column::Kind::kClustering;
        rows.push_back(RowBuilder(table)
                           .Set("keyspace_name", key.first)
                           .Set("table_name", key.second)
                           .Set("column_name", column.name)
                           .Set("column_name_bytes", column.name)
                           .Set("clustering_order", clustering ? (column.descending ? "desc" : "asc") : "none")
                           .Set("kind", KindName(column.kind))
                           .Set("position", NativeInt(column.kind == Column::Kind::kRegular ? -1 : column.position))
                           .Set("type", TypeName(column.type))
                           .Take());
      }
    }
  }
  return rows;
}

Schema BuildSystemSchema() {
  Schema schema;
  for (const char* definition : kDefinitions) {
    absl::StatusOr<ParsedStatement> parsed = Parse(definition);
    CHARYBDIS_ASSERT(parsed.ok());
    absl::Status applied;
    if (auto* keyspace = std::get_if<CreateKeyspace>(&parsed->statement)) {
      applied = schema.ApplySystem(*keyspace);
    } else {
      applied = schema.Apply(std::get<CreateTable>(parsed->statement), /*sequence=*/0, /*allow_unordered_keys=*/true);
    }
    CHARYBDIS_ASSERT(applied.ok());
  }
  CHARYBDIS_ASSERT(schema.keyspaces().size() == 2);  // system and system_schema
  return schema;
}

}  // namespace

const Schema& SystemSchema() {
  static const Schema* schema = new Schema(BuildSystemSchema());
  return *schema;
}

bool IsSystemKeyspace(std::string_view keyspace) { return SystemSchema().FindKeyspace(keyspace) != nullptr; }

std::vector<ResultRow> SystemRows(const Table& table, const Schema& user_schema, const ClusterView& cluster) {
  const std::vector<const Schema*> schemas = {&SystemSchema(), &user_schema};
  if (table.keyspace == "system") {
    if (table.name == "local") return LocalRows(table, user_schema, cluster);
    return PeerRows(table, user_schema, cluster);
  }
  if (table.name == "keyspaces") return KeyspaceRows(table, schemas);
  if (table.name == "tables") return TableRows(table, schemas);
  if (table.name == "columns") return ColumnRows(table, schemas);
  return {};  // types, functions, aggregates, indexes, views, triggers: none
}

}  // namespace charybdis::cql
