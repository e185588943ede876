#pragma once

// No client statement reads or changes system_auth directly: roles change
// only through CREATE, ALTER and DROP ROLE, which hash passwords and check
// who asks, and the salted hashes are read by logins alone
// (docs/security.md). LIST ROLES lists them.

#include <optional>

#include "core/cql/prepared.h"
#include "core/cql/result.h"
#include "proto/client.pb.h"

namespace charybdis::cql {

// Unauthorized, naming what was refused, when `prepared` names
// system_auth (its table, any statement of a batch, or a schema change of
// the keyspace or its tables); nothing otherwise.
std::optional<Error> SystemAuthRefusal(const Prepared& prepared);

// Why a request of ours from the gRPC client API is refused: it reads or
// writes a table of the system keyspaces (system.*: the schema and
// topology logs; system_schema.*; system_auth.*: the roles), or is a
// schema change that names one. Nothing when it may run. CQL clients meet
// the same rule above (and the system tables CQL serves are read-only).
std::optional<std::string> SystemTableRefusal(const ClientRequest& request);

}  // namespace charybdis::cql
