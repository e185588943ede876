#include "core/schema/bootstrap.h"

#include "absl/strings/str_cat.h"
#include "core/cql/parser.h"
#include "core/env/assert.h"
#include "core/schema/replication.h"
#include "core/cql/system_tables.h"

namespace charybdis::cql {
namespace {

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

// A keyspace's replication as CREATE or ALTER asks it, replaced by its
// checked form (CheckedReplication), which must fit `fits` when set.
absl::Status CheckReplication(const std::string& name, std::map<std::string, std::string>& replication,
                              const Datacenters& datacenters, const Datacenters* fits) {
  absl::StatusOr<std::map<std::string, std::string>> checked = CheckedReplication(name, replication, datacenters);
  if (!checked.ok()) return checked.status();
  if (fits != nullptr) {
    if (absl::Status fit = CheckFits(name, *checked, *fits); !fit.ok()) return fit;
  }
  replication = *std::move(checked);
  CHARYBDIS_ASSERT(replication.count("class") == 1);
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplySchemaStatement(std::string_view text, const Datacenters& datacenters, const Datacenters* fits,
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
    // It exists: AlreadyExists, or nothing to do for IF NOT EXISTS.
    if (schema.FindKeyspace(create->name) != nullptr) return schema.Apply(*create, sequence);
    if (absl::Status checked = CheckReplication(create->name, create->replication, datacenters, fits); !checked.ok()) {
      return checked;
    }
    return schema.Apply(*create, sequence);
  }
  if (auto* alter = std::get_if<AlterKeyspace>(&statement)) {
    if (absl::Status reserved = CheckNotSystem(alter->name); !reserved.ok()) return reserved;
    if (schema.FindKeyspace(alter->name) == nullptr) return absl::InvalidArgumentError(absl::StrCat("keyspace ", alter->name, " does not exist"));
    if (alter->replication.empty()) return absl::OkStatus();  // durable_writes only: nothing we keep
    if (absl::Status checked = CheckReplication(alter->name, alter->replication, datacenters, fits); !checked.ok()) {
      return checked;
    }
    return schema.Apply(*alter);
  }
  if (auto* drop = std::get_if<DropKeyspace>(&statement)) {
    if (absl::Status reserved = CheckNotSystem(drop->name); !reserved.ok()) return reserved;
    return schema.Apply(*drop);
  }
  if (auto* create = std::get_if<CreateTable>(&statement)) return ApplyToTable(*create, keyspace, schema, sequence);
  if (auto* drop = std::get_if<DropTable>(&statement)) return ApplyToTable(*drop, keyspace, schema);
  if (auto* alter = std::get_if<AlterTable>(&statement)) return ApplyToTable(*alter, keyspace, schema, sequence);
  return absl::InvalidArgumentError("only CREATE, DROP and ALTER of keyspaces and tables, and USE, change the schema");
}

std::map<std::string, std::set<std::string>> StorageTables(const Schema& schema) {
  std::map<std::string, std::set<std::string>> tables;
  for (const auto& [name, table] : schema.tables()) {
    const std::vector<std::string> columns = table.StorageColumns();
    tables[table.storage].insert(columns.begin(), columns.end());
  }
  CHARYBDIS_ASSERT(tables.size() <= schema.tables().size());
  return tables;
}

BootstrapSchema BuildBootstrapSchema(const std::vector<std::string>& statements, const Datacenters& datacenters) {
  BootstrapSchema result;
  auto schema = std::make_shared<Schema>();
  std::string keyspace;
  for (size_t i = 0; i < statements.size(); i++) {
    absl::Status applied = ApplySchemaStatement(statements[i], datacenters, &datacenters, /*sequence=*/0, *schema, keyspace);
    if (!applied.ok()) result.problems.emplace_back(static_cast<int>(i), std::string(applied.message()));
  }
  CHARYBDIS_ASSERT(result.problems.size() <= statements.size());
  result.storage_tables = StorageTables(*schema);
  result.schema = std::move(schema);
  return result;
}

}  // namespace charybdis::cql
