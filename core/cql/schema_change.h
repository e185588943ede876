#pragma once

// CREATE/DROP KEYSPACE and CREATE/DROP/ALTER TABLE through CQL: the request
// that asks the node's schema agent to append the statement to the schema
// log (core/schema/schema_agent.h), and the SCHEMA_CHANGE result (section 4.2.5.5)
// or error its answer becomes.

#include <string>
#include <vector>

#include "core/cql/execute.h"
#include "core/cql/schema.h"
#include "core/cql/statement.h"

namespace charybdis::cql {

// The kind of a RESULT that says the schema changed (native protocol).
constexpr int32_t kSchemaChangeResultKind = 5;

// A SCHEMA_CHANGE's <change_type>, <target> and <options>.
struct SchemaChange {
  std::string change;  // CREATED, UPDATED or DROPPED
  std::string target;  // KEYSPACE or TABLE
  std::string keyspace;
  std::string table;  // TABLE only
};

// REQUIRES: IsSchemaChange(statement). `keyspace`: the connection's.
SchemaChange DescribeSchemaChange(const Statement& statement, const std::string& keyspace);
// What changed from `before` to `after`, as the SCHEMA_CHANGEs a driver
// refreshes its metadata from: keyspaces, then tables, each by name. A
// table dropped and created again in between is DROPPED, then CREATED.
std::vector<SchemaChange> SchemaChangesBetween(const Schema& before, const Schema& after);
// The <change_type><target><options> of a RESULT or an EVENT.
void WriteSchemaChange(Writer& out, const SchemaChange& change);

// REQUIRES: IsSchemaChange(prepared.parsed.statement).
Plan PlanSchemaChange(const Prepared& prepared);

}  // namespace charybdis::cql
