#pragma once

// The schema a cluster starts with: CREATE KEYSPACE, CREATE TABLE and USE
// statements, applied in order (a node's cql_schema, a scenario's
// schema.cql). One implementation for real nodes and the simulator.

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/cql/schema.h"

namespace charybdis::cql {

struct BootstrapSchema {
  std::shared_ptr<const Schema> schema;
  // The storage tables its CQL tables need: name -> columns (with the
  // row marker), for the coordinators' table lists.
  std::map<std::string, std::set<std::string>> storage_tables;
  // What is wrong, by statement index.
  std::vector<std::pair<int, std::string>> problems;
};

// `replication`: the cluster's factor per datacenter, which every keyspace
// must match (per-keyspace replication is not supported yet).
BootstrapSchema BuildBootstrapSchema(const std::vector<std::string>& statements,
                                     const std::map<std::string, uint32_t>& replication);

}  // namespace charybdis::cql
