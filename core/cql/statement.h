#pragma once

// What the CQL parser makes of a statement: a syntax tree, unchecked
// against the schema (core/cql/bind.h does that).

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace charybdis::cql {

// A term: a constant; a bind marker (`?`, or `:name`; markers are numbered
// in the order of the statement's text); a function call (`now()`); or a
// collection literal of terms: `[a, b]` (kList), `{a, b}` (kSet),
// `{k: v, ...}` (kMap) or `{}` (kMap: a set or a map, as its column is).
struct Term {
  enum class Kind { kString, kInteger, kFloat, kBoolean, kUuid, kHex, kNull, kBindMarker, kList, kSet, kMap, kFunction };
  Kind kind = Kind::kNull;
  std::string text;  // the literal as written (strings unquoted); a function's name
  int marker = -1;   // kBindMarker: its index among the statement's markers
  // Collections: the elements (a map's are key, value, key, value...); a
  // function (core/cql/functions.h): its arguments.
  std::vector<Term> elements;

  bool is_collection() const { return kind == Kind::kList || kind == Kind::kSet || kind == Kind::kMap; }
};

enum class Operator { kEq, kNe, kLt, kLe, kGt, kGe, kIn };

struct Relation {
  // token(a, b) > x: `token` lists the columns, `column` is empty.
  std::string column;
  std::vector<std::string> token;
  Operator op = Operator::kEq;
  std::vector<Term> terms;  // one, or IN's list
  bool bound_list = false;  // IN ?: one marker binds the whole list
  bool token_on_right = false;  // token(a) > token(x): `terms` are key values
};

struct TableName {
  std::string keyspace;  // empty: the connection's (USE)
  std::string table;
};

struct Using {
  std::optional<Term> ttl_seconds;
  std::optional<Term> timestamp_us;
};

struct Condition {
  std::string column;
  Operator op = Operator::kEq;
  Term value;
  std::optional<Term> element;  // IF m[k] op value: a map's entry
};

// A modification's IF: nothing, IF EXISTS, IF NOT EXISTS, or conditions.
struct IfClause {
  bool exists = false;
  bool not_exists = false;
  std::vector<Condition> conditions;
  bool any() const { return exists || not_exists || !conditions.empty(); }
};

// A selected column; WRITETIME(c) or TTL(c) of one; token(pk, ...); or
// an aggregate of a column over the rows read: count(c), min, max, sum,
// avg. `alias`: its name in the result (AS alias).
struct Selector {
  enum class Function { kNone, kWritetime, kTtl, kToken, kCount, kMin, kMax, kSum, kAvg };
  Function function = Function::kNone;
  std::string column;
  std::vector<std::string> arguments;  // kToken: the partition key's columns
  std::string alias;
};

struct Select {
  TableName table;
  bool count = false;             // SELECT COUNT(*)
  std::vector<Selector> columns;  // empty: *
  std::vector<Relation> where;
  std::optional<std::pair<std::string, bool>> order_by;  // column, descending
  std::optional<Term> limit;
};

struct Insert {
  TableName table;
  std::vector<std::string> columns;
  std::vector<Term> values;
  Using using_;
  IfClause if_;
};

// One assignment of an UPDATE's SET: `c = v`, `c = c + v` (a collection's
// new elements), `c = v + c` (a list's, in front), `c = c - v` (elements
// removed; a map's by a set of keys), or `c[k] = v` (a map's entry).
struct Assignment {
  enum class Op { kSet, kAdd, kPrepend, kRemove, kSetElement };
  std::string column;
  Op op = Op::kSet;
  Term value;
  Term element;  // kSetElement: the key
};

struct Update {
  TableName table;
  Using using_;
  std::vector<Assignment> set;
  std::vector<Relation> where;
  IfClause if_;
};

// A column a DELETE deletes, or one entry of a map column: `m[k]`.
struct Deletion {
  std::string column;
  std::optional<Term> element;
};

struct Delete {
  TableName table;
  std::vector<Deletion> columns;  // empty: the row
  Using using_;
  std::vector<Relation> where;
  IfClause if_;
};

using Modification = std::variant<Insert, Update, Delete>;

struct Batch {
  bool logged = true;
  Using using_;
  std::vector<Modification> statements;
};

struct Use {
  std::string keyspace;
};

struct ColumnDefinition {
  std::string name;
  std::string type;
};

struct CreateKeyspace {
  std::string name;
  bool if_not_exists = false;
  std::map<std::string, std::string> replication;
};

// WITH gc_grace_seconds = N AND tombstone_gc = {'mode': ..., ...}: as
// written, checked by the schema (docs/repair.md).
struct TableGcOptions {
  std::optional<std::string> gc_grace_seconds;
  std::map<std::string, std::string> tombstone_gc;

  bool empty() const { return !gc_grace_seconds && tombstone_gc.empty(); }
};

struct CreateTable {
  TableName table;
  bool if_not_exists = false;
  std::vector<ColumnDefinition> columns;
  std::vector<std::string> partition_key;
  std::vector<std::string> clustering;
  std::map<std::string, bool> descending;  // CLUSTERING ORDER BY
  TableGcOptions gc;
};

// ALTER KEYSPACE ... WITH replication = {...}: a change of replication
// moves data first (docs/topology.md).
struct AlterKeyspace {
  std::string name;
  std::map<std::string, std::string> replication;  // empty: unchanged (durable_writes only)
};

struct DropKeyspace {
  std::string name;
  bool if_exists = false;
};

struct DropTable {
  TableName table;
  bool if_exists = false;
};

// ALTER TABLE ... ADD (columns) or DROP (names): one of the two lists.
// ALTER TABLE t ADD ... | DROP ... | WITH options (of which only the
// tombstone GC's are kept).
struct AlterTable {
  TableName table;
  std::vector<ColumnDefinition> add;
  std::vector<std::string> drop;
  TableGcOptions gc;
};

// CREATE ROLE and ALTER ROLE's WITH PASSWORD = '...' AND LOGIN = true AND
// SUPERUSER = false (docs/security.md): what was given.
struct RoleOptions {
  std::optional<std::string> password;
  std::optional<bool> login;
  std::optional<bool> superuser;

  bool empty() const { return !password && !login && !superuser; }
};

struct CreateRole {
  std::string name;
  bool if_not_exists = false;
  RoleOptions options;
};

struct AlterRole {
  std::string name;
  RoleOptions options;
};

struct DropRole {
  std::string name;
  bool if_exists = false;
};

struct ListRoles {};

// ALL KEYSPACES (both empty), KEYSPACE ks, or [TABLE] [ks.]table.
struct PermissionResource {
  std::string keyspace;
  std::string table;
};

// GRANT permissions ON resource TO role, or REVOKE ... FROM role.
struct GrantPermissions {
  bool revoke = false;
  std::vector<std::string> permissions;  // as written; "ALL" for ALL PERMISSIONS
  PermissionResource resource;
  std::string role;
};

// GRANT granted TO role, or REVOKE granted FROM role: `role` holds what
// `granted` holds (its permissions, its superuser status, the roles
// granted to it), as in Cassandra.
struct GrantRole {
  bool revoke = false;
  std::string granted;
  std::string role;
};

// LIST ALL PERMISSIONS | LIST permission [ON resource] [OF role].
struct ListPermissions {
  std::string permission;  // "ALL", or one permission's name
  std::optional<PermissionResource> resource;
  std::optional<std::string> role;
};

using Statement = std::variant<Select, Insert, Update, Delete, Batch, Use, CreateKeyspace, CreateTable, DropKeyspace,
                               DropTable, AlterTable, AlterKeyspace, CreateRole, AlterRole, DropRole, ListRoles,
                               GrantPermissions, ListPermissions, GrantRole>;

// Whether a statement manages roles or their permissions
// (core/cql/role_statements.h runs it).
inline bool IsRoleStatement(const Statement& statement) {
  return std::holds_alternative<CreateRole>(statement) || std::holds_alternative<AlterRole>(statement) ||
         std::holds_alternative<DropRole>(statement) || std::holds_alternative<ListRoles>(statement) ||
         std::holds_alternative<GrantPermissions>(statement) || std::holds_alternative<ListPermissions>(statement) ||
         std::holds_alternative<GrantRole>(statement);
}

// Whether a statement changes the schema (the schema log carries it).
inline bool IsSchemaChange(const Statement& statement) {
  return std::holds_alternative<CreateKeyspace>(statement) || std::holds_alternative<CreateTable>(statement) ||
         std::holds_alternative<DropKeyspace>(statement) || std::holds_alternative<DropTable>(statement) ||
         std::holds_alternative<AlterTable>(statement) || std::holds_alternative<AlterKeyspace>(statement);
}

struct ParsedStatement {
  Statement statement;
  // One entry per bind marker: its name (`:name`), or empty for `?`.
  std::vector<std::string> markers;
};

}  // namespace charybdis::cql
