#pragma once

// A statement parsed and checked against the schema: which table, which
// type each bind marker takes, which markers give the partition key (so
// that drivers route), and what a SELECT returns. QUERY prepares its
// statement too, then executes it once.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/cql/result.h"
#include "core/cql/schema.h"
#include "core/cql/statement.h"

namespace charybdis::cql {

struct Prepared {
  std::string query;
  std::string keyspace;  // the connection's (USE) when it was prepared
  ParsedStatement parsed;
  // The statement's table (a batch's first), resolved against USE.
  std::optional<Table> table;
  bool system_table = false;  // served from what the node knows
  std::vector<ResultColumn> markers;
  // For each partition key column, the marker that gives it (empty when a
  // constant gives any of them).
  std::vector<int> partition_key_markers;
  std::vector<ResultColumn> result_columns;  // SELECT's
  bool conditional = false;                  // IF ...: a Paxos round
};

struct PrepareResult {
  std::shared_ptr<const Prepared> prepared;
  Error error;  // when prepared is null
};

// `keyspace`: the connection's (USE), for names without one.
PrepareResult Prepare(const Schema& schema, std::string_view keyspace, std::string_view query);

}  // namespace charybdis::cql
