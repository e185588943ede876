#pragma once

// A SELECT's aggregates over the rows it read (count(c), min, max, sum,
// avg of a column), as Cassandra computes them: nulls are skipped; count
// counts the non-null values; min and max compare in CQL order (null when
// no value is left); sum and avg of an integer type add in 64 bits and
// answer in the column's type (the sum wrapping as Cassandra's does, the
// average truncated), of float and double in double; both are 0 over no
// value. Pure.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/cql/result.h"
#include "core/cql/types.h"

namespace charybdis::cql {

// Whether `function` (kCount, kMin, ...) takes a column of `type`: an
// error in Cassandra's words when it does not.
absl::Status CheckAggregate(ResultColumn::Holds function, const std::string& name, const Type& type);

// The result type of the aggregate of a column of `type`.
Type AggregateType(ResultColumn::Holds function, const Type& type);

// The aggregate of `values` (native values of a column of `type`; nullopt
// is null).
std::optional<std::string> Aggregate(ResultColumn::Holds function, const Type& type,
                                     const std::vector<std::optional<std::string>>& values);

}  // namespace charybdis::cql
