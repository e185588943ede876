#pragma once

// What each CQL statement needs of its role's permissions (docs/security.md),
// as Cassandra's CassandraAuthorizer asks: SELECT to read a table, MODIFY
// to write it (and SELECT too for a conditional write, which reads),
// CREATE on the parent to create, ALTER and DROP on the thing itself.

#include <vector>

#include "core/auth/permissions.h"
#include "core/cql/prepared.h"

namespace charybdis::cql {

// Nothing for USE, the system tables drivers read, and role statements
// (core/cql/role_statements.h checks those itself).
std::vector<auth::Needed> NeededFor(const Prepared& prepared);

}  // namespace charybdis::cql
