#include "core/cql/bootstrap.h"

#include "absl/strings/str_cat.h"
#include "core/cql/parser.h"
#include "core/cql/system_tables.h"

namespace charybdis::cql {
namespace {

// Whether a keyspace replicates as the cluster does (empty if so).
std::string ReplicationProblem(const Keyspace& keyspace, const std::map<std::string, uint32_t>& replication) {
  std::map<std::string, std::string> wanted;
  for (const auto& [datacenter, factor] : replication) wanted[datacenter] = absl::StrCat(factor);
  std::map<std::string, std::string> given = keyspace.replication;
  const std::string strategy = given["class"];
  given.erase("class");
  bool same = given == wanted;
  if (strategy == "org.apache.cassandra.locator.SimpleStrategy") {
    same = replication.size() == 1 && given.size() == 1 && given.count("replication_factor") &&
           given["replication_factor"] == wanted.begin()->second;
  }
  if (same) return "";
  std::string cluster;
  for (const auto& [datacenter, factor] : wanted) absl::StrAppend(&cluster, cluster.empty() ? "" : ", ", datacenter, ": ", factor);
  return absl::StrCat("keyspace ", keyspace.name, " must replicate as the cluster does (", cluster,
                      "): per-keyspace replication is not supported yet");
}

absl::Status CheckNotSystem(const std::string& keyspace) {
  if (!IsSystemKeyspace(keyspace)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("keyspace ", keyspace, " is reserved"));
}

// A table statement, its keyspace defaulting to the connection's:
// refused in the system keyspaces, else applied.
template <typename Statement, typename... Arguments>
absl::Status ApplyToTable(Statement statement, const std::string& keyspace, Schema& schema, Arguments... arguments) {
  if (statement.table.keyspace.empty()) statement.table.keyspace = keyspace;
  if (absl::Status reserved = CheckNotSystem(statement.table.keyspace); !reserved.ok()) return reserved;
  return schema.Apply(statement, arguments...);
}

}  // namespace

absl::Status ApplySchemaStatement(std::string_view text, const std::map<std::string, uint32_t>& replication,
                                  uint64_t sequence, Schema& schema, std::string& keyspace) {
  absl::StatusOr<ParsedStatement> parsed = Parse(text);
  if (!parsed.ok()) return parsed.status();
  Statement& statement = parsed->statement;
  if (auto* use = std::get_if<Use>(&statement)) {
    keyspace = use->keyspace;
    return absl::OkStatus();
  }
  if (auto* create = std::get_if<CreateKeyspace>(&statement)) {
    if (absl::Status reserved = CheckNotSystem(create->name); !reserved.ok()) return reserved;
    const bool existed = schema.FindKeyspace(create->name) != nullptr;
    if (absl::Status applied = schema.Apply(*create); !applied.ok() || existed) return applied;
    const std::string problem = ReplicationProblem(*schema.FindKeyspace(create->name), replication);
    if (problem.empty()) return absl::OkStatus();
    schema.Apply(DropKeyspace{create->name, false}).IgnoreError();  // undone: the statement is refused
    return absl::FailedPreconditionError(problem);
  }
  if (auto* drop = std::get_if<DropKeyspace>(&statement)) {
    if (absl::Status reserved = CheckNotSystem(drop->name); !reserved.ok()) return reserved;
    return schema.Apply(*drop);
  }
  if (auto* create = std::get_if<CreateTable>(&statement)) return ApplyToTable(*create, keyspace, schema, sequence);
  if (auto* drop = std::get_if<DropTable>(&statement)) return ApplyToTable(*drop, keyspace, schema);
  if (auto* alter = std::get_if<AlterTable>(&statement)) return ApplyToTable(*alter, keyspace, schema);
  return absl::InvalidArgumentError("only CREATE, DROP and ALTER of keyspaces and tables, and USE, change the schema");
}

std::map<std::string, std::set<std::string>> StorageTables(const Schema& schema) {
  std::map<std::string, std::set<std::string>> tables;
  for (const auto& [name, table] : schema.tables()) {
    std::set<std::string>& columns = tables[table.storage];
    columns.insert(kRowMarker);
    for (const Column& column : table.columns) {
      if (column.kind == Column::Kind::kRegular) columns.insert(column.name);
    }
  }
  return tables;
}

BootstrapSchema BuildBootstrapSchema(const std::vector<std::string>& statements,
                                     const std::map<std::string, uint32_t>& replication) {
  BootstrapSchema result;
  auto schema = std::make_shared<Schema>();
  std::string keyspace;
  for (size_t i = 0; i < statements.size(); i++) {
    absl::Status applied = ApplySchemaStatement(statements[i], replication, /*sequence=*/0, *schema, keyspace);
    if (!applied.ok()) result.problems.emplace_back(static_cast<int>(i), std::string(applied.message()));
  }
  result.storage_tables = StorageTables(*schema);
  result.schema = std::move(schema);
  return result;
}

}  // namespace charybdis::cql
