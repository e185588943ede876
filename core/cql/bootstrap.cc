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

absl::Status ApplyOne(const std::string& text, const std::map<std::string, uint32_t>& replication, Schema& schema,
                      std::string& keyspace) {
  absl::StatusOr<ParsedStatement> parsed = Parse(text);
  if (!parsed.ok()) return parsed.status();
  if (auto* use = std::get_if<Use>(&parsed->statement)) {
    keyspace = use->keyspace;
    return absl::OkStatus();
  }
  if (auto* create = std::get_if<CreateKeyspace>(&parsed->statement)) {
    if (IsSystemKeyspace(create->name)) return absl::InvalidArgumentError(absl::StrCat("keyspace ", create->name, " is reserved"));
    if (absl::Status applied = schema.Apply(*create); !applied.ok()) return applied;
    const std::string problem = ReplicationProblem(*schema.FindKeyspace(create->name), replication);
    return problem.empty() ? absl::OkStatus() : absl::InvalidArgumentError(problem);
  }
  if (auto* table = std::get_if<CreateTable>(&parsed->statement)) {
    if (table->table.keyspace.empty()) table->table.keyspace = keyspace;
    return schema.Apply(*table);
  }
  return absl::InvalidArgumentError("only CREATE KEYSPACE, CREATE TABLE and USE belong here");
}

}  // namespace

BootstrapSchema BuildBootstrapSchema(const std::vector<std::string>& statements,
                                     const std::map<std::string, uint32_t>& replication) {
  BootstrapSchema result;
  auto schema = std::make_shared<Schema>();
  std::string keyspace;
  for (size_t i = 0; i < statements.size(); i++) {
    if (absl::Status applied = ApplyOne(statements[i], replication, *schema, keyspace); !applied.ok()) {
      result.problems.emplace_back(static_cast<int>(i), std::string(applied.message()));
    }
  }
  for (const auto& [name, table] : schema->tables()) {
    std::set<std::string>& columns = result.storage_tables[table.storage_name()];
    columns.insert(kRowMarker);
    for (const Column& column : table.columns) {
      if (column.kind == Column::Kind::kRegular) columns.insert(column.name);
    }
  }
  result.schema = std::move(schema);
  return result;
}

}  // namespace charybdis::cql
