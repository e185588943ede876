#pragma once

// CREATE ROLE, ALTER ROLE, DROP ROLE and LIST ROLES (docs/security.md):
// who may run each, then the hash and the conditional write that run it.

#include <functional>

#include "core/cql/auth_service.h"
#include "core/cql/role_store.h"
#include "core/cql/statement.h"

namespace charybdis::cql {

// Runs role statement `statement` for `caller`, the connection's role as
// read just now, and hands `run` the plan that answers it (an error, a
// void result, or LIST ROLES' read). Superusers manage every role; any
// role may change its own password and list itself. REQUIRES:
// IsRoleStatement(statement).
void RunRoleStatement(Backend& backend, AuthService& auth, const RoleRecord& caller, const Statement& statement,
                      std::function<void(Plan)> run);

}  // namespace charybdis::cql
