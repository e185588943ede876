#pragma once

// CQL's native scalar functions in terms (`INSERT ... VALUES (now())`):
// now() and uuid(), currentTimestamp() and currentDate(), and the
// conversions of a timeuuid toTimestamp(), toUnixTimestamp() and
// toDate(), as Cassandra defines them. They read the node's clock and
// random bits through FunctionSources, which the connection's backend
// gives: a real node's clock, or in a simulation the node's simulated
// clock and a seeded stream, so runs replay.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "core/cql/statement.h"
#include "core/cql/types.h"

namespace charybdis::cql {

struct FunctionSources {
  std::function<int64_t()> now_us;     // microseconds since the epoch
  std::function<uint64_t()> random;    // 64 random bits
};

// The native value of function term `term` (Term::Kind::kFunction) for a
// column of `type`; an error in Cassandra's words when the function is
// unknown, its arguments wrong, or its result not of `type`.
absl::StatusOr<std::string> CallFunction(const Term& term, const Type& type, const FunctionSources& sources);

// A version 1 UUID of `micros` since the epoch, its clock sequence and
// node from `random` (as now() makes them).
std::string TimeUuid(int64_t micros, uint64_t random);
// The microseconds since the epoch of a version 1 UUID's time.
int64_t MicrosOfTimeUuid(const std::string& uuid);

}  // namespace charybdis::cql
