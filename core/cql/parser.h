#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "core/cql/statement.h"

namespace charybdis::cql {

// One CQL statement (a trailing ';' is allowed). A syntax error is an
// InvalidArgument whose message says where: "line 1:7 mismatched input
// 'FORM' expecting FROM", as Cassandra's parser words it.
absl::StatusOr<ParsedStatement> Parse(std::string_view text);

}  // namespace charybdis::cql
