#pragma once

// The parts of PlanExecution, one file each (core/cql/execute.cc).

#include "core/cql/bindings.h"
#include "core/cql/execute.h"

namespace charybdis::cql {

Plan ErrorPlan(Error error);
Plan InvalidPlan(const std::string& message);

Plan PlanSelect(const std::shared_ptr<const Prepared>& prepared, const Bindings& bindings,
                const QueryOptions& options);
// REQUIRES: IsScan(*prepared->table, the SELECT).
Plan PlanScan(const std::shared_ptr<const Prepared>& prepared, const Bindings& bindings, const QueryOptions& options);
Plan PlanSystemSelect(const Prepared& prepared, const Select& select, const Bindings& bindings,
                      const QueryOptions& options, const Schema& schema, const ClusterView& cluster);

absl::StatusOr<std::vector<CasStatement>> BuildWrites(const Prepared& prepared, const Bindings& bindings,
                                                      const QueryOptions& options);

// The SELECT's LIMIT, if any.
absl::StatusOr<std::optional<int32_t>> LimitOf(const Select& select, const Bindings& bindings);

// A non-frozen collection's native value from a stored row's element
// cells, or null when it has none.
std::optional<std::string> CollectionOf(const Column& column, const charybdis::ResultRow& stored);

// The result row of `columns` for one stored row of `table`.
ResultRow AssembleRow(const Table& table, const std::vector<ResultColumn>& columns,
                      const std::vector<std::string>& partition_key, const charybdis::ResultRow& stored);

}  // namespace charybdis::cql
