#include "core/cql/prepared.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/cql/aggregates.h"
#include "core/cql/parser.h"
#include "core/cql/system_tables.h"
#include "core/env/assert.h"

namespace charybdis::cql {
namespace {

Error Invalid(std::string message) { return {ErrorCode::kInvalid, std::move(message), ""}; }

// Walks one statement: resolves its table, types its markers, checks its
// columns. The first problem sticks.
class Checker {
 public:
  Checker(const Schema& schema, std::string_view keyspace, Prepared& prepared)
      : schema_(schema), keyspace_(keyspace), prepared_(prepared) {
    prepared_.markers.resize(prepared_.parsed.markers.size());
  }

  std::optional<Error> error;

  const Table* Resolve(const TableName& name) {
    const std::string keyspace = name.keyspace.empty() ? std::string(keyspace_) : name.keyspace;
    if (keyspace.empty()) {
      Fail("No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename");
      return nullptr;
    }
    const bool system = IsSystemKeyspace(keyspace);
    const Table* table = system ? SystemSchema().FindTable(keyspace, name.table) : schema_.FindTable(keyspace, name.table);
    if (table == nullptr) {
      if (!system && schema_.FindKeyspace(keyspace) == nullptr) {
        Fail(absl::StrCat("Keyspace ", keyspace, " does not exist"));
      } else {
        Fail(absl::StrCat("unconfigured table ", name.table));
      }
      return nullptr;
    }
    if (!prepared_.table) {
      prepared_.table = *table;
      prepared_.system_table = system;
    } else if (prepared_.table->keyspace != table->keyspace || prepared_.table->name != table->name) {
      // The BATCH message's statements may (each prepared apart).
      Fail("the statements of a BEGIN BATCH must write one table (a BATCH message of prepared statements may span tables)");
    }
    return table;
  }

  const Column* ColumnOf(const Table& table, std::string_view name) {
    const Column* column = table.Find(name);
    if (column == nullptr) Fail(absl::StrCat("Undefined column name ", std::string(name)));
    return column;
  }

  // Types the term's marker, if it is one.
  // A `:name` marker is known by its own name (drivers bind by it), a `?`
  // by what it gives.
  void Bind(const Term& term, const std::string& name, const Type& type, const Table& table) {
    if (term.is_collection()) {
      // Markers inside a literal take its elements' types (Cassandra's names).
      if (!type.is_collection()) return;  // the literal's mismatch is found when it is evaluated
      const bool map = type.kind == Kind::kMap;
      for (size_t i = 0; i < term.elements.size(); i++) {
        const bool value = map && i % 2 == 1;
        Bind(term.elements[i], absl::StrCat(value ? "value(" : "key(", name, ")"), type.params[value ? 1 : 0], table);
      }
      return;
    }
    if (term.kind != Term::Kind::kBindMarker) return;
    // The parser numbers the markers 0, 1, ... in the statement's order.
    CHARYBDIS_ASSERT(term.marker >= 0);
    CHARYBDIS_ASSERT(static_cast<size_t>(term.marker) < prepared_.markers.size());
    const std::string& own = prepared_.parsed.markers[term.marker];
    prepared_.markers[term.marker] = {table.keyspace, table.name, own.empty() ? name : own, type};
  }

  // Each column at most once in an INSERT's columns or an UPDATE's SET.
  void Distinct(const std::vector<std::string>& columns) {
    std::set<std::string> seen;
    for (const std::string& column : columns) {
      if (!seen.insert(column).second) Fail(absl::StrCat("Multiple definitions found for column ", column));
    }
  }

  void Where(const Table& table, const std::vector<Relation>& where) {
    for (const Relation& relation : where) {
      if (!relation.token.empty()) {
        if (prepared_.system_table) Fail("system tables take no token() restrictions");
        if (relation.token_on_right) Fail("token() on the right of a relation is not supported: give the token as a bigint");
        for (const Term& term : relation.terms) Bind(term, "partition key token", Type{Kind::kBigint, {}}, table);
        continue;
      }
      const Column* column = ColumnOf(table, relation.column);
      if (column == nullptr) return;
      if (relation.bound_list) {
        // IN ?: the marker takes a list of the column's values.
        Bind(relation.terms[0], absl::StrCat("in(", column->name, ")"), Type{Kind::kList, {column->type}}, table);
        continue;
      }
      for (const Term& term : relation.terms) Bind(term, column->name, column->type, table);
    }
  }

  void Using(const Table& table, const cql::Using& using_) {
    if (using_.ttl_seconds) Bind(*using_.ttl_seconds, "[ttl]", Type{Kind::kInt, {}}, table);
    if (using_.timestamp_us) Bind(*using_.timestamp_us, "[timestamp]", Type{Kind::kBigint, {}}, table);
  }

  void If(const Table& table, const IfClause& clause) {
    prepared_.conditional = prepared_.conditional || clause.any();
    for (const Condition& condition : clause.conditions) {
      const Column* column = ColumnOf(table, condition.column);
      if (column == nullptr) return;
      if (column->kind != Column::Kind::kRegular) Fail(absl::StrCat("PRIMARY KEY column '", column->name, "' cannot have IF conditions"));
      if (condition.element) {
        // IF m[k] op v: the entry's value, compared as a column of its type.
        if (!column->type.multi_cell() || column->type.kind != Kind::kMap) {
          return Fail(absl::StrCat("conditions on an element of ", column->name,
                                   " are supported on non-frozen maps only (a list's index needs a read)"));
        }
        Bind(*condition.element, absl::StrCat("key(", column->name, ")"), column->type.params[0], table);
        const Type& value = column->type.params[1];
        if (condition.op != Operator::kEq && condition.op != Operator::kNe && !IsOrdered(value)) {
          Fail(absl::StrCat("a ", TypeName(value), " value can only be compared with = and !="));
        }
        Bind(condition.value, absl::StrCat("value(", column->name, ")"), value, table);
        continue;
      }
      if (condition.op != Operator::kEq && condition.op != Operator::kNe && !IsOrdered(column->type)) {
        Fail(absl::StrCat("a ", TypeName(column->type), " column can only be compared with = and !="));
      }
      Bind(condition.value, column->name, column->type, table);
    }
  }

  // UPDATE and DELETE name one row: every key column, with =. A range
  // DELETE names its partition so (`partition_only`), and its clustering
  // columns as a SELECT's slice, with no IN.
  void WholePrimaryKey(const Table& table, const std::vector<Relation>& where, bool partition_only = false) {
    for (const Column& column : table.columns) {
      if (column.kind == Column::Kind::kRegular) break;
      if (partition_only && column.kind == Column::Kind::kClustering) {
        for (const Relation& relation : where) {
          if (relation.column == column.name && (relation.op == Operator::kIn || relation.op == Operator::kNe)) {
            Fail(absl::StrCat("a DELETE of a range of rows takes =, <, <=, > and >= on ", column.name, ", not IN or !="));
          }
        }
        continue;
      }
      int found = 0;
      for (const Relation& relation : where) {
        if (relation.column != column.name) continue;
        if (relation.op != Operator::kEq) Fail(absl::StrCat("only = is supported on ", column.name, " here"));
        found++;
      }
      if (found != 1) Fail(absl::StrCat("Some primary key parts are missing or repeated: ", column.name));
    }
    for (const Relation& relation : where) {
      const Column* column = ColumnOf(table, relation.column);
      if (column != nullptr && column->kind == Column::Kind::kRegular) {
        Fail(absl::StrCat("Non PRIMARY KEY columns found in where clause: ", column->name));
      }
    }
  }

  void Check(const Insert& insert) {
    const Table* table = Resolve(insert.table);
    if (table == nullptr) return;
    Distinct(insert.columns);
    for (size_t i = 0; i < insert.columns.size(); i++) {
      const Column* column = ColumnOf(*table, insert.columns[i]);
      if (column != nullptr) Bind(insert.values[i], column->name, column->type, *table);
    }
    for (const Column& column : table->columns) {
      if (column.kind == Column::Kind::kRegular) break;
      if (std::find(insert.columns.begin(), insert.columns.end(), column.name) == insert.columns.end()) {
        Fail(absl::StrCat("Some primary key parts are missing: ", column.name));
      }
    }
    Using(*table, insert.using_);
    If(*table, insert.if_);
  }

  // One assignment of an UPDATE: what its operation needs of its column.
  void Assign(const Table& table, const Assignment& assignment) {
    const Column* column = ColumnOf(table, assignment.column);
    if (column == nullptr) return;
    const std::string& name = column->name;
    if (column->kind != Column::Kind::kRegular) return Fail(absl::StrCat("PRIMARY KEY part ", name, " found in SET part"));
    const Type& type = column->type;
    switch (assignment.op) {
      case Assignment::Op::kSet: return Bind(assignment.value, name, type, table);
      case Assignment::Op::kAdd:
      case Assignment::Op::kRemove:
        if (!type.multi_cell()) {
          return Fail(absl::StrCat("Invalid operation (", name, " = ", name, assignment.op == Assignment::Op::kAdd ? " + " : " - ",
                                   "?) for non collection column ", name));
        }
        if (assignment.op == Assignment::Op::kRemove && type.kind == Kind::kList) {
          return Fail("removing elements of a list by value is not supported yet (it needs a read before the write)");
        }
        // A map loses entries by a set of their keys.
        return Bind(assignment.value, name,
                    type.kind == Kind::kMap && assignment.op == Assignment::Op::kRemove ? Type{Kind::kSet, {type.params[0]}} : type,
                    table);
      case Assignment::Op::kPrepend:
        if (type.kind != Kind::kList || !type.multi_cell()) return Fail(absl::StrCat("Invalid operation (", name, " = ? + ", name, ") for non list column ", name));
        return Bind(assignment.value, name, type, table);
      case Assignment::Op::kSetElement:
        if (!type.multi_cell()) return Fail(absl::StrCat("Invalid operation (", name, "[?] = ?) for non collection column ", name));
        if (type.kind == Kind::kSet) return Fail(absl::StrCat("Invalid operation (", name, "[?] = ?) for set column ", name));
        if (type.kind == Kind::kList) return Fail("setting a list element by its index is not supported yet (it needs a read before the write)");
        Bind(assignment.element, absl::StrCat("key(", name, ")"), type.params[0], table);
        return Bind(assignment.value, absl::StrCat("value(", name, ")"), type.params[1], table);
    }
  }

  void Check(const Update& update) {
    const Table* table = Resolve(update.table);
    if (table == nullptr) return;
    std::vector<std::string> whole;  // a map may get several entries
    for (const Assignment& assignment : update.set) {
      if (assignment.op != Assignment::Op::kSetElement) whole.push_back(assignment.column);
    }
    Distinct(whole);
    Using(*table, update.using_);
    for (const Assignment& assignment : update.set) Assign(*table, assignment);
    Where(*table, update.where);
    WholePrimaryKey(*table, update.where);
    If(*table, update.if_);
  }

  void Check(const Delete& del) {
    const Table* table = Resolve(del.table);
    if (table == nullptr) return;
    for (const Deletion& deletion : del.columns) {
      const Column* column = ColumnOf(*table, deletion.column);
      if (column == nullptr) continue;
      if (column->kind != Column::Kind::kRegular) Fail(absl::StrCat("Invalid identifier ", deletion.column, " for deletion (should not be a PRIMARY KEY part)"));
      if (!deletion.element) continue;
      if (!column->type.multi_cell() || column->type.kind == Kind::kSet) {
        Fail(absl::StrCat("Invalid element access syntax for ", column->type.kind == Kind::kSet ? "set" : "non collection", " column ", column->name));
      } else if (column->type.kind == Kind::kList) {
        Fail("deleting a list element by its index is not supported yet (it needs a read before the write)");
      } else {
        Bind(*deletion.element, absl::StrCat("key(", column->name, ")"), column->type.params[0], *table);
      }
    }
    Using(*table, del.using_);
    Where(*table, del.where);
    const bool range = IsRangeDelete(*table, del);
    WholePrimaryKey(*table, del.where, range);
    // Cassandra's rules and words: a column or a condition is of one row.
    if (range && !del.columns.empty()) Fail("Range deletions are not supported for specific columns");
    if (range && del.if_.any()) {
      Fail("DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to use IF conditions");
    }
    If(*table, del.if_);
  }

  // A column of the SELECT's result: a table column's value, or when it
  // was written (WRITETIME, microseconds) or how long it has left to live
  // (TTL, seconds; null without one), as Cassandra names and types them.
  void SelectColumn(const Table& table, const Selector& selector) {
    if (selector.function == Selector::Function::kToken) return SelectToken(table, selector);
    if (selector.function == Selector::Function::kCount && selector.column.empty()) {
      // count(*) beside other selectors: the rows (AggregateRow).
      prepared_.result_columns.push_back({table.keyspace, table.name, "count", Type{Kind::kBigint, {}},
                                          ResultColumn::Holds::kCount, ""});
      return;
    }
    const Column* column = ColumnOf(table, selector.column);
    if (column == nullptr) return;
    if (selector.function == Selector::Function::kNone) {
      prepared_.result_columns.push_back({table.keyspace, table.name, column->name, column->type});
      return;
    }
    if (selector.function >= Selector::Function::kCount) return SelectAggregate(table, *column, selector);
    const bool ttl = selector.function == Selector::Function::kTtl;
    if (prepared_.system_table) {
      Fail("WRITETIME and TTL are not supported on system tables");
      return;
    }
    if (column->kind != Column::Kind::kRegular) {
      Fail(absl::StrCat("Cannot use selection function ", ttl ? "ttl" : "writeTime", " on PRIMARY KEY part ", column->name));
      return;
    }
    if (column->type.multi_cell()) {
      Fail(absl::StrCat("Cannot use selection function ", ttl ? "ttl" : "writeTime", " on non-frozen collection ", column->name));
      return;
    }
    prepared_.result_columns.push_back({table.keyspace, table.name,
                                        absl::StrCat(ttl ? "ttl(" : "writetime(", column->name, ")"),
                                        Type{ttl ? Kind::kInt : Kind::kBigint, {}},
                                        ttl ? ResultColumn::Holds::kTtl : ResultColumn::Holds::kWritetime, column->name});
  }

  // token(pk, ...): the partition's token, as Cassandra names it.
  void SelectToken(const Table& table, const Selector& selector) {
    std::vector<std::string> key;
    for (int i = 0; i < table.partition_key_count; i++) key.push_back(table.columns[i].name);
    if (selector.arguments != key) return Fail("token() takes the partition key's columns, in order");
    if (prepared_.system_table) return Fail("token() is not supported on system tables");
    prepared_.result_columns.push_back({table.keyspace, table.name, absl::StrCat("system.token(", absl::StrJoin(key, ", "), ")"),
                                        Type{Kind::kBigint, {}}, ResultColumn::Holds::kToken, ""});
  }

  // count(c), min, max, sum, avg of a column over the rows read.
  void SelectAggregate(const Table& table, const Column& column, const Selector& selector) {
    static const std::pair<Selector::Function, std::pair<ResultColumn::Holds, const char*>> kAggregates[] = {
        {Selector::Function::kCount, {ResultColumn::Holds::kCount, "count"}},
        {Selector::Function::kMin, {ResultColumn::Holds::kMin, "min"}},
        {Selector::Function::kMax, {ResultColumn::Holds::kMax, "max"}},
        {Selector::Function::kSum, {ResultColumn::Holds::kSum, "sum"}},
        {Selector::Function::kAvg, {ResultColumn::Holds::kAvg, "avg"}}};
    for (const auto& [function, holds_name] : kAggregates) {
      if (function != selector.function) continue;
      const auto& [holds, name] = holds_name;
      if (prepared_.system_table) return Fail("aggregates are not supported on system tables");
      if (column.type.multi_cell() && holds != ResultColumn::Holds::kCount) {
        return Fail(absl::StrCat("Invalid call to function ", name, ", none of its type signatures match (argument ",
                                 column.name, " is of type ", TypeName(column.type), ")"));
      }
      if (absl::Status fits = CheckAggregate(holds, column.name, column.type); !fits.ok()) return Fail(std::string(fits.message()));
      prepared_.result_columns.push_back({table.keyspace, table.name, absl::StrCat("system.", name, "(", column.name, ")"),
                                          AggregateType(holds, column.type), holds, column.name});
      return;
    }
    CHARYBDIS_ASSERT(false && "an aggregate selector");
  }

  void Check(const Select& select) {
    const Table* table = Resolve(select.table);
    if (table == nullptr) return;
    Where(*table, select.where);
    if (select.limit) Bind(*select.limit, "[limit]", Type{Kind::kInt, {}}, *table);
    if (select.order_by) {
      const Column* column = ColumnOf(*table, select.order_by->first);
      if (column != nullptr && (column->kind != Column::Kind::kClustering || column->position != 0)) {
        Fail("Order by is currently only supported on the first clustering column");
      }
    }
    if (select.count) {
      prepared_.result_columns.push_back({table->keyspace, table->name, "count", Type{Kind::kBigint, {}}});
      CHARYBDIS_ASSERT(prepared_.result_columns.size() == 1);  // COUNT answers one column
    } else if (select.columns.empty()) {
      for (const Column& column : table->columns) prepared_.result_columns.push_back({table->keyspace, table->name, column.name, column.type});
    } else {
      for (const Selector& selector : select.columns) {
        SelectColumn(*table, selector);
        if (selector.alias.empty() || prepared_.result_columns.empty()) continue;
        ResultColumn& named = prepared_.result_columns.back();
        // What the alias stands for: a column's name (the others name theirs).
        if (named.holds == ResultColumn::Holds::kValue) named.source = named.name;
        named.name = selector.alias;
      }
    }
    const bool aggregates = std::any_of(prepared_.result_columns.begin(), prepared_.result_columns.end(),
                                        [](const ResultColumn& column) { return column.aggregate(); });
    if (aggregates && (prepared_.system_table || IsScan(*table, select))) {
      Fail("aggregates are supported over the rows of named partitions (a WHERE on the partition key), not over a scan yet");
    }
    if (!prepared_.system_table) CheckSelectKey(*table, select);
  }

  // A SELECT of ours reads partitions named by their whole key, or scans
  // the table in ring order, within token() bounds if given.
  void CheckSelectKey(const Table& table, const Select& select) {
    for (const Relation& relation : select.where) {
      const Column* column = table.Find(relation.column);
      if (column != nullptr && column->kind == Column::Kind::kRegular) {
        Fail(absl::StrCat("filtering on the regular column ", column->name, " is not supported"));
      }
    }
    if (IsScan(table, select)) return CheckScan(table, select);
    for (int i = 0; i < table.partition_key_count; i++) {
      int restrictions = 0;
      bool restricted = false;
      for (const Relation& relation : select.where) {
        if (relation.column != table.columns[i].name) continue;
        restrictions++;
        restricted = relation.op == Operator::kEq || relation.op == Operator::kIn;
      }
      if (restrictions > 1) Fail(absl::StrCat("partition key part ", table.columns[i].name, " is restricted more than once"));
      if (!restricted) Fail(absl::StrCat("a SELECT must restrict the partition key column ", table.columns[i].name, " with = or IN (full scans are not supported yet)"));
    }
  }

  void CheckScan(const Table& table, const Select& select) {
    std::vector<std::string> key;
    for (int i = 0; i < table.partition_key_count; i++) key.push_back(table.columns[i].name);
    for (const Relation& relation : select.where) {
      if (relation.token.empty()) {
        return Fail(absl::StrCat("restricting the clustering column ", relation.column,
                                 " needs the partition key restricted too (ALLOW FILTERING is not supported)"));
      }
      if (relation.token != key) Fail("the token() of a relation must list the partition key columns, in order");
      if (relation.op == Operator::kIn || relation.op == Operator::kNe) Fail("token() takes =, <, <=, > or >=");
    }
    if (select.order_by) Fail("ORDER BY is only supported when the partition key is restricted by an EQ or an IN.");
  }

  void Check(const Batch& batch) {
    if (batch.using_.ttl_seconds) Fail("Global TTL on the BATCH statement is not supported.");
    for (const Modification& statement : batch.statements) {
      std::visit([&](const auto& modification) { Check(modification); }, statement);
      if (prepared_.table) Using(*prepared_.table, batch.using_);
    }
  }

  void Check(const Use&) {}
  // Schema changes are checked by the schema log (core/schema/schema_log.h),
  // against the newest schema.
  void Check(const CreateKeyspace&) {}
  void Check(const CreateTable&) {}
  void Check(const DropKeyspace&) {}
  void Check(const DropTable&) {}
  void Check(const AlterTable&) {}
  void Check(const AlterKeyspace&) {}
  // Role statements name no table; core/cql/role_statements.h checks them.
  void Check(const CreateRole&) {}
  void Check(const AlterRole&) {}
  void Check(const DropRole&) {}
  void Check(const ListRoles&) {}
  void Check(const GrantPermissions&) {}
  void Check(const ListPermissions&) {}
  void Check(const GrantRole&) {}

  void PartitionKeyMarkers(const Statement& statement) {
    if (!prepared_.table || prepared_.system_table) return;
    const Table& table = *prepared_.table;
    std::vector<int> markers(table.partition_key_count, -1);
    const auto note = [&](const std::string& column, const Term& term) {
      const int index = table.IndexOf(column);
      if (index >= 0 && index < table.partition_key_count && term.kind == Term::Kind::kBindMarker) markers[index] = term.marker;
    };
    if (const auto* insert = std::get_if<Insert>(&statement)) {
      for (size_t i = 0; i < insert->columns.size(); i++) note(insert->columns[i], insert->values[i]);
    }
    const std::vector<Relation>* where = nullptr;
    if (const auto* select = std::get_if<Select>(&statement)) where = &select->where;
    if (const auto* update = std::get_if<Update>(&statement)) where = &update->where;
    if (const auto* del = std::get_if<Delete>(&statement)) where = &del->where;
    if (where != nullptr) {
      for (const Relation& relation : *where) {
        if (relation.op == Operator::kEq) note(relation.column, relation.terms[0]);
      }
    }
    if (std::find(markers.begin(), markers.end(), -1) == markers.end()) prepared_.partition_key_markers = markers;
    CHARYBDIS_ASSERT(prepared_.partition_key_markers.empty() ||
                     prepared_.partition_key_markers.size() == static_cast<size_t>(table.partition_key_count));
  }

 private:
  void Fail(std::string message) {
    if (!error) error = Invalid(std::move(message));
  }

  const Schema& schema_;
  std::string_view keyspace_;
  Prepared& prepared_;
};

bool UsesTimestamp(const Statement& statement) {
  const auto of = [](const Modification& modification) {
    return std::visit([](const auto& m) { return m.using_.timestamp_us.has_value(); }, modification);
  };
  if (const auto* batch = std::get_if<Batch>(&statement)) {
    bool any = batch->using_.timestamp_us.has_value();
    for (const Modification& modification : batch->statements) any = any || of(modification);
    return any;
  }
  if (const auto* insert = std::get_if<Insert>(&statement)) return of(*insert);
  if (const auto* update = std::get_if<Update>(&statement)) return of(*update);
  if (const auto* del = std::get_if<Delete>(&statement)) return of(*del);
  return false;
}

}  // namespace

PrepareResult Prepare(const Schema& schema, std::string_view keyspace, std::string_view query) {
  absl::StatusOr<ParsedStatement> parsed = Parse(query);
  if (!parsed.ok()) return {nullptr, {ErrorCode::kSyntax, std::string(parsed.status().message()), ""}};
  auto prepared = std::make_shared<Prepared>();
  prepared->query = std::string(query);
  prepared->keyspace = std::string(keyspace);
  prepared->parsed = std::move(*parsed);
  if (IsSchemaChange(prepared->parsed.statement) && !prepared->parsed.markers.empty()) {
    return {nullptr, Invalid("a schema change takes no bind markers")};
  }
  if (IsRoleStatement(prepared->parsed.statement) && !prepared->parsed.markers.empty()) {
    return {nullptr, Invalid("a role statement takes no bind markers")};
  }
  Checker checker(schema, keyspace, *prepared);
  std::visit([&](const auto& statement) { checker.Check(statement); }, prepared->parsed.statement);
  if (checker.error) return {nullptr, *checker.error};
  checker.PartitionKeyMarkers(prepared->parsed.statement);
  if (prepared->conditional && UsesTimestamp(prepared->parsed.statement)) {
    return {nullptr, Invalid("Cannot provide custom timestamp for conditional updates")};
  }
  CHARYBDIS_ASSERT(prepared->markers.size() == prepared->parsed.markers.size());
  return {prepared, {}};
}

}  // namespace charybdis::cql
