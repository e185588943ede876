#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "core/cql/statement.h"
#include "core/cql/types.h"

namespace charybdis::cql {

// The native value a constant of the statement's text denotes for a
// column of `type`, or nullopt for null. A constant of the wrong kind
// (a string for an int) is an InvalidArgument, worded as Cassandra does.
// REQUIRES: term is not a bind marker.
absl::StatusOr<std::optional<std::string>> LiteralValue(const Type& type, const Term& term);

}  // namespace charybdis::cql
