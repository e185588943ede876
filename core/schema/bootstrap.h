#pragma once

// The schema a cluster starts with: CREATE KEYSPACE, CREATE TABLE and USE
// statements, applied in order (a node's cql_schema, a scenario's
// schema.cql). Then the schema log's statements (core/schema/schema_agent.h), applied
// in its order on every node. One implementation for real nodes and the
// simulator.

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/schema/replication.h"
#include "core/cql/schema.h"

namespace charybdis::cql {

// Applies one schema statement to `schema`: CREATE or DROP KEYSPACE,
// CREATE, DROP or ALTER TABLE, or USE (which sets `keyspace`, the default
// for names without one). `sequence`: the statement's schema log entry (0:
// the bootstrap). A refused statement changes nothing; the status says why
// (kAlreadyExists, kFailedPrecondition for replication, kInvalidArgument).
// `datacenters`: those NetworkTopologyStrategy's replication_factor names;
// `fits`: if set, the datacenters and nodes a keyspace's replication must
// fit (CheckFits), as when a change is proposed; unset when an entry
// decided already is applied.
absl::Status ApplySchemaStatement(std::string_view text, const Datacenters& datacenters, const Datacenters* fits,
                                  uint64_t sequence, Schema& schema, std::string& keyspace);

// The storage tables of a schema's CQL tables: name -> columns (with the
// row marker), for the coordinators' table checks.
std::map<std::string, std::set<std::string>> StorageTables(const Schema& schema);

struct BootstrapSchema {
  std::shared_ptr<const Schema> schema;
  // The storage tables its CQL tables need: name -> columns (with the
  // row marker), for the coordinators' table lists.
  std::map<std::string, std::set<std::string>> storage_tables;
  // What is wrong, by statement index.
  std::vector<std::pair<int, std::string>> problems;
};

BootstrapSchema BuildBootstrapSchema(const std::vector<std::string>& statements, const Datacenters& datacenters);

}  // namespace charybdis::cql
