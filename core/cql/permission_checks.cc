#include "core/cql/permission_checks.h"

#include <set>

#include "core/cql/parser.h"

namespace charybdis::cql {
namespace {

using auth::Needed;
using auth::Permission;

class Collector {
 public:
  explicit Collector(const std::string& keyspace) : keyspace_(keyspace) {}

  void Table(Permission permission, const TableName& name) {
    needed_.insert({permission, auth::TableResource(Space(name.keyspace), name.table)});
  }
  void Keyspace(Permission permission, const std::string& keyspace) {
    needed_.insert({permission, auth::KeyspaceResource(Space(keyspace))});
  }
  template <typename Write>
  void Modification(const Write& write) {
    Table(Permission::kModify, write.table);
    if (write.if_.any()) Table(Permission::kSelect, write.table);  // a condition reads
  }

  std::vector<Needed> Take() { return {needed_.begin(), needed_.end()}; }

 private:
  std::string Space(const std::string& keyspace) const { return keyspace.empty() ? keyspace_ : keyspace; }

  const std::string& keyspace_;
  std::set<Needed> needed_;
};

}  // namespace

std::vector<auth::Needed> NeededFor(const Prepared& prepared) {
  const Statement& statement = prepared.parsed.statement;
  Collector needed(prepared.keyspace);
  if (const auto* select = std::get_if<Select>(&statement)) {
    if (!prepared.system_table) needed.Table(Permission::kSelect, select->table);
  } else if (const auto* insert = std::get_if<Insert>(&statement)) {
    needed.Modification(*insert);
  } else if (const auto* update = std::get_if<Update>(&statement)) {
    needed.Modification(*update);
  } else if (const auto* del = std::get_if<Delete>(&statement)) {
    needed.Modification(*del);
  } else if (const auto* batch = std::get_if<Batch>(&statement)) {
    for (const Modification& modification : batch->statements) {
      std::visit([&](const auto& write) { needed.Modification(write); }, modification);
    }
  } else if (std::holds_alternative<CreateKeyspace>(statement)) {
    return {{Permission::kCreate, auth::AllKeyspacesResource()}};
  } else if (const auto* create = std::get_if<CreateTable>(&statement)) {
    needed.Keyspace(Permission::kCreate, create->table.keyspace);
  } else if (const auto* alter = std::get_if<AlterKeyspace>(&statement)) {
    needed.Keyspace(Permission::kAlter, alter->name);
  } else if (const auto* drop = std::get_if<DropKeyspace>(&statement)) {
    needed.Keyspace(Permission::kDrop, drop->name);
  } else if (const auto* alter = std::get_if<AlterTable>(&statement)) {
    needed.Table(Permission::kAlter, alter->table);
  } else if (const auto* drop = std::get_if<DropTable>(&statement)) {
    needed.Table(Permission::kDrop, drop->table);
  }
  return needed.Take();
}

namespace {

// The resource a statement of kind KeyspaceStatement or TableStatement
// names, its table's keyspace resolved against the connection's.
template <typename KeyspaceStatement, typename TableStatement>
std::optional<std::string> NamedResource(const Prepared& prepared) {
  const Statement& statement = prepared.parsed.statement;
  if (const auto* keyspace = std::get_if<KeyspaceStatement>(&statement)) return auth::KeyspaceResource(keyspace->name);
  if (const auto* table = std::get_if<TableStatement>(&statement)) {
    const std::string& keyspace = table->table.keyspace.empty() ? prepared.keyspace : table->table.keyspace;
    return auth::TableResource(keyspace, table->table.table);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> CreatedResource(const Prepared& prepared) {
  return NamedResource<CreateKeyspace, CreateTable>(prepared);
}

std::optional<std::string> DroppedResource(const Prepared& prepared) {
  return NamedResource<DropKeyspace, DropTable>(prepared);
}

std::optional<Prepared> PreparedOf(const SchemaChangeOp& change) {
  absl::StatusOr<ParsedStatement> parsed = Parse(change.statement());
  if (!parsed.ok()) return std::nullopt;
  Prepared prepared;
  prepared.keyspace = change.keyspace();
  prepared.query = change.statement();
  prepared.parsed = *std::move(parsed);
  return prepared;
}

std::vector<std::string> TablesOf(const ClientRequest& request) {
  std::vector<std::string> tables;
  if (request.has_write()) tables.push_back(request.write().table());
  if (request.has_read()) tables.push_back(request.read().table());
  if (request.has_scan()) tables.push_back(request.scan().table());
  for (const CasStatement& statement : request.cas().statement()) tables.push_back(statement.write().table());
  for (const WriteOp& write : request.batch().write()) tables.push_back(write.table());
  return tables;
}

namespace {

std::string StorageTableResource(const std::string& table) {
  const size_t dot = table.find('.');
  if (dot == std::string::npos) return auth::AllKeyspacesResource();
  return auth::TableResource(table.substr(0, dot), table.substr(dot + 1));
}

}  // namespace

std::optional<std::vector<auth::Needed>> NeededForRequest(const ClientRequest& request) {
  if (request.has_topology_change() || request.has_cleanup() || request.has_repair() || request.has_compact()) {
    return std::nullopt;
  }
  if (request.has_schema_change()) {
    std::optional<Prepared> prepared = PreparedOf(request.schema_change());
    // Unparsed: the schema agent refuses it, and only superusers may be
    // told why (what it does is unknown).
    if (!prepared) return std::nullopt;
    return NeededFor(*prepared);
  }
  std::set<Needed> needed;
  const bool reads = request.has_read() || request.has_scan() || request.has_cas();
  const bool writes = request.has_write() || request.has_batch() || request.has_cas();
  for (const std::string& table : TablesOf(request)) {
    if (reads) needed.insert({Permission::kSelect, StorageTableResource(table)});
    if (writes) needed.insert({Permission::kModify, StorageTableResource(table)});
  }
  return std::vector<Needed>(needed.begin(), needed.end());
}

}  // namespace charybdis::cql
