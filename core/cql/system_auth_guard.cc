#include "core/cql/system_auth_guard.h"

#include "absl/strings/str_cat.h"
#include "core/cql/parser.h"
#include "core/cql/permission_checks.h"
#include "core/cql/role_store.h"

namespace charybdis::cql {
namespace {

// Whether a name, resolved against the connection's keyspace, is in
// system_auth.
bool InAuth(const std::string& keyspace, const std::string& connection_keyspace) {
  return (keyspace.empty() ? connection_keyspace : keyspace) == kAuthKeyspace;
}

bool NamesAuth(const Statement& statement, const std::string& keyspace) {
  if (const auto* batch = std::get_if<Batch>(&statement)) {
    for (const Modification& modification : batch->statements) {
      if (std::visit([&](const auto& m) { return InAuth(m.table.keyspace, keyspace); }, modification)) return true;
    }
    return false;
  }
  if (std::holds_alternative<Use>(statement)) return false;  // harmless: what it names is checked
  if (const auto* create = std::get_if<CreateKeyspace>(&statement)) return create->name == kAuthKeyspace;
  if (const auto* drop = std::get_if<DropKeyspace>(&statement)) return drop->name == kAuthKeyspace;
  if (const auto* alter = std::get_if<AlterKeyspace>(&statement)) return alter->name == kAuthKeyspace;
  if (const auto* select = std::get_if<Select>(&statement)) return InAuth(select->table.keyspace, keyspace);
  if (const auto* insert = std::get_if<Insert>(&statement)) return InAuth(insert->table.keyspace, keyspace);
  if (const auto* update = std::get_if<Update>(&statement)) return InAuth(update->table.keyspace, keyspace);
  if (const auto* del = std::get_if<Delete>(&statement)) return InAuth(del->table.keyspace, keyspace);
  if (const auto* create = std::get_if<CreateTable>(&statement)) return InAuth(create->table.keyspace, keyspace);
  if (const auto* drop = std::get_if<DropTable>(&statement)) return InAuth(drop->table.keyspace, keyspace);
  if (const auto* alter = std::get_if<AlterTable>(&statement)) return InAuth(alter->table.keyspace, keyspace);
  return false;  // role statements: system_auth is theirs
}

}  // namespace

namespace {

bool IsSystemStorageTable(const std::string& table) {
  for (const char* keyspace : {"system.", "system_schema.", "system_auth."}) {
    if (table.rfind(keyspace, 0) == 0) return true;
  }
  return false;
}

}  // namespace

std::optional<std::string> SystemTableRefusal(const ClientRequest& request) {
  for (const std::string& table : TablesOf(request)) {
    if (IsSystemStorageTable(table)) {
      return absl::StrCat("table ", table, " is the system's: clients neither read nor write it");
    }
  }
  if (!request.has_schema_change()) return std::nullopt;
  absl::StatusOr<ParsedStatement> parsed = Parse(request.schema_change().statement());
  if (!parsed.ok()) return std::nullopt;  // the schema agent says what is wrong with it
  const std::string& keyspace = request.schema_change().keyspace();
  if (NamesAuth(parsed->statement, keyspace) || IsRoleStatement(parsed->statement)) {
    return "system_auth changes only through CQL role statements";
  }
  return std::nullopt;
}

std::optional<Error> SystemAuthRefusal(const Prepared& prepared) {
  if (!NamesAuth(prepared.parsed.statement, prepared.keyspace)) return std::nullopt;
  return Error{ErrorCode::kUnauthorized,
               absl::StrCat("system_auth is read and changed only through role statements (CREATE ROLE, ALTER ROLE, "
                            "DROP ROLE, LIST ROLES): '", prepared.query, "' names it"),
               ""};
}

}  // namespace charybdis::cql
