#pragma once

// Executing a prepared statement: what requests of ours it takes, and how
// their answers become the CQL response. Pure: the caller runs the
// requests (a real node's shards, or the simulator's) and hands back the
// answers in order.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/cql/functions.h"
#include "core/cql/prepared.h"
#include "core/cql/result.h"
#include "core/cql/system_tables.h"
#include "core/cql/wire.h"
#include "core/env/probe.h"
#include "proto/client.pb.h"

namespace charybdis::cql {

// A QUERY's or EXECUTE's <query_parameters> (section 4.1.4).
struct QueryOptions {
  ConsistencyLevel consistency = CL_ONE;
  ConsistencyLevel serial_consistency = CL_SERIAL;
  std::vector<Value> values;
  std::vector<std::string> value_names;  // when the values are named
  int32_t page_size = -1;                // <= 0: everything at once
  std::optional<std::string> paging_state;
  std::optional<int64_t> timestamp_us;
  bool skip_metadata = false;
  // Not from the wire: where the plan marks its rare paths (paging at a
  // boundary), the connection's backend's.
  Probes* probes = NoProbes::Instance();
  // Not from the wire: what now() and its kin read (the backend's); null,
  // they are refused.
  const FunctionSources* functions = nullptr;
};

struct Plan {
  // Answered without requests (errors, system tables, USE).
  std::optional<Response> response;
  // Otherwise: run these, all at once, then call finish with their answers
  // in the same order.
  std::vector<ClientRequest> requests;
  std::function<Response(const std::vector<ClientResponse>&)> finish;
  // USE: the connection's keyspace from now on.
  std::optional<std::string> use_keyspace;
};

Plan PlanExecution(const std::shared_ptr<const Prepared>& prepared, const QueryOptions& options, const Schema& schema,
                   const ClusterView& cluster);

// The writes of an INSERT, UPDATE, DELETE or BATCH statement (with their
// conditions), and the plan that runs them: a statement's plain writes all
// at once, a batch's as one BatchOp (logged or not: core/batchlog/batchlog.h), or
// one conditional write (of one table) when `conditional`. The BATCH
// message joins the writes of its statements this way.
enum class Batching { kNone, kLogged, kUnlogged };
absl::StatusOr<std::vector<CasStatement>> BuildWrites(const Prepared& prepared, const QueryOptions& options,
                                                      const std::vector<Value>& values,
                                                      const std::vector<std::string>& names);
Plan WritePlan(const std::shared_ptr<const Prepared>& table_of, std::vector<CasStatement> statements,
               bool conditional, Batching batching, const QueryOptions& options);

// A failed answer of ours as the protocol's error. `cas`: the request was
// a conditional write (WriteTimeout's write type is then CAS).
Error ErrorOf(const ClientResponse& response, bool cas);

}  // namespace charybdis::cql
