#include "core/cql/execute.h"

#include "absl/strings/str_cat.h"
#include "core/cql/consistency_code.h"
#include "core/cql/literal.h"
#include "core/cql/plan_parts.h"
#include "core/cql/schema_change.h"
#include "core/env/assert.h"

namespace charybdis::cql {

Plan ErrorPlan(Error error) {
  Plan plan;
  plan.response = ErrorResponse(error);
  return plan;
}

Plan InvalidPlan(const std::string& message) { return ErrorPlan({ErrorCode::kInvalid, message, ""}); }

Plan PlanSystemSelect(const Prepared& prepared, const Select& select, const Bindings& bindings,
                      const QueryOptions& options, const Schema& schema, const ClusterView& cluster) {
  const Table& table = *prepared.table;
  ResultSet result;
  result.columns = prepared.result_columns;
  for (ResultRow& row : SystemRows(table, schema, cluster)) {
    CHARYBDIS_ASSERT(row.size() == table.columns.size());
    bool matches = true;
    for (const Relation& relation : select.where) {
      const int index = table.IndexOf(relation.column);
      CHARYBDIS_ASSERT(index >= 0);  // Prepare refused unknown columns and token()
      if (relation.op != Operator::kEq && relation.op != Operator::kIn) return InvalidPlan("system tables take only = and IN");
      bool any = false;
      for (const Term& term : relation.terms) {
        absl::StatusOr<Bound> value = bindings.Evaluate(term, table.columns[index].type);
        if (!value.ok()) return InvalidPlan(std::string(value.status().message()));
        any = any || value->value == row[index];
      }
      matches = matches && any;
    }
    if (!matches) continue;
    ResultRow projected;
    for (const ResultColumn& column : prepared.result_columns) {
      if (select.count) break;
      const std::string& name = column.source.empty() ? column.name : column.source;  // an alias names its source
      CHARYBDIS_ASSERT(table.IndexOf(name) >= 0);
      projected.push_back(row[table.IndexOf(name)]);
    }
    result.rows.push_back(std::move(projected));
  }
  if (select.count) result.rows = {{NativeBigint(static_cast<int64_t>(result.rows.size()))}};
  return {RowsResult(result, options.skip_metadata), {}, {}, {}};
}

Plan PlanExecution(const std::shared_ptr<const Prepared>& shared, const QueryOptions& options, const Schema& schema,
                   const ClusterView& cluster) {
  CHARYBDIS_ASSERT(shared != nullptr);
  const Prepared& prepared = *shared;
  absl::StatusOr<Bindings> bindings = Bindings::Make(prepared, options.values, options.value_names, options.functions);
  if (!bindings.ok()) return InvalidPlan(std::string(bindings.status().message()));
  if (options.serial_consistency != CL_SERIAL && options.serial_consistency != CL_LOCAL_SERIAL) {
    return InvalidPlan("the serial consistency must be SERIAL or LOCAL_SERIAL");
  }
  const Statement& statement = prepared.parsed.statement;
  if (const auto* use = std::get_if<Use>(&statement)) {
    if (schema.FindKeyspace(use->keyspace) == nullptr && !IsSystemKeyspace(use->keyspace)) {
      return InvalidPlan(absl::StrCat("Keyspace '", use->keyspace, "' does not exist"));
    }
    Plan plan;
    plan.response = SetKeyspaceResult(use->keyspace);
    plan.use_keyspace = use->keyspace;
    return plan;
  }
  if (IsSchemaChange(statement)) return PlanSchemaChange(prepared);
  if (const auto* select = std::get_if<Select>(&statement)) {
    if (prepared.system_table) return PlanSystemSelect(prepared, *select, *bindings, options, schema, cluster);
    return PlanSelect(shared, *bindings, options);
  }
  if (prepared.system_table) return InvalidPlan("system tables are read-only");
  if (!prepared.table) return {VoidResult(), {}, {}, {}};  // an empty BATCH
  absl::StatusOr<std::vector<CasStatement>> writes = BuildWrites(prepared, *bindings, options);
  if (!writes.ok()) return InvalidPlan(std::string(writes.status().message()));
  const auto* batch = std::get_if<Batch>(&statement);
  const Batching batching = batch == nullptr ? Batching::kNone : batch->logged ? Batching::kLogged : Batching::kUnlogged;
  return WritePlan(shared, std::move(*writes), prepared.conditional, batching, options);
}

absl::StatusOr<std::vector<CasStatement>> BuildWrites(const Prepared& prepared, const QueryOptions& options,
                                                      const std::vector<Value>& values,
                                                      const std::vector<std::string>& names) {
  if (prepared.system_table) return absl::InvalidArgumentError("system tables are read-only");
  if (!std::holds_alternative<Insert>(prepared.parsed.statement) && !std::holds_alternative<Update>(prepared.parsed.statement) &&
      !std::holds_alternative<Delete>(prepared.parsed.statement)) {
    return absl::InvalidArgumentError("a BATCH holds only INSERT, UPDATE and DELETE statements");
  }
  absl::StatusOr<Bindings> bindings = Bindings::Make(prepared, values, names, options.functions);
  if (!bindings.ok()) return bindings.status();
  return BuildWrites(prepared, *bindings, options);
}

Error ErrorOf(const ClientResponse& response, bool cas) {
  Writer details;
  details.Short(ToCqlConsistency(response.consistency()));
  switch (response.code()) {
    case ClientResponse::UNAVAILABLE:
      details.Int(static_cast<int32_t>(response.blocked_for()));
      details.Int(static_cast<int32_t>(response.alive()));
      return {ErrorCode::kUnavailable, response.message(), details.Take()};
    case ClientResponse::WRITE_TIMEOUT:
      details.Int(static_cast<int32_t>(response.received()));
      details.Int(static_cast<int32_t>(response.blocked_for()));
      details.String(cas ? "CAS" : response.write_type().empty() ? "SIMPLE" : response.write_type());
      return {ErrorCode::kWriteTimeout, response.message(), details.Take()};
    case ClientResponse::READ_TIMEOUT:
      details.Int(static_cast<int32_t>(response.received()));
      details.Int(static_cast<int32_t>(response.blocked_for()));
      details.Byte(response.data_present() ? 1 : 0);
      return {ErrorCode::kReadTimeout, response.message(), details.Take()};
    case ClientResponse::READ_FAILURE:
      details.Int(static_cast<int32_t>(response.received()));
      details.Int(static_cast<int32_t>(response.blocked_for()));
      details.Int(static_cast<int32_t>(response.failures()));
      details.Byte(response.data_present() ? 1 : 0);
      return {ErrorCode::kReadFailure, response.message(), details.Take()};
    case ClientResponse::INVALID_REQUEST:
      return {ErrorCode::kInvalid, response.message(), ""};
    default:
      return {ErrorCode::kServer, absl::StrCat("unexpected answer: ", response.message()), ""};
  }
}

}  // namespace charybdis::cql
