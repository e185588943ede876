#pragma once

// No client statement reads or changes system_auth directly: roles change
// only through CREATE, ALTER and DROP ROLE, which hash passwords and check
// who asks, and the salted hashes are read by logins alone
// (docs/security.md). LIST ROLES lists them.

#include <optional>

#include "core/cql/prepared.h"
#include "core/cql/result.h"

namespace charybdis::cql {

// Unauthorized, naming what was refused, when `prepared` names
// system_auth (its table, any statement of a batch, or a schema change of
// the keyspace or its tables); nothing otherwise.
std::optional<Error> SystemAuthRefusal(const Prepared& prepared);

}  // namespace charybdis::cql
