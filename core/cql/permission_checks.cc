#include "core/cql/permission_checks.h"

#include <set>

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

}  // namespace charybdis::cql
