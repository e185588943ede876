#pragma once

// CREATE ROLE, ALTER ROLE, DROP ROLE and LIST ROLES (docs/security.md):
// who may run each, then the hash and the conditional write that run it.

#include <functional>

#include "core/cql/auth_service.h"
#include "core/cql/role_store.h"
#include "core/cql/statement.h"

namespace charybdis::cql {

// Runs role statement `statement` for `caller`, the connection's role as
// read just now (`granted`: its permissions), and hands `run` the plan
// that answers it (an error, a void result, or rows). Superusers manage
// every role; any role may change its own password and list itself and
// its permissions; GRANT and REVOKE need AUTHORIZE on the resource and the
// permissions given. `keyspace`: the connection's (USE). REQUIRES:
// IsRoleStatement(statement).
void RunRoleStatement(Backend& backend, AuthService& auth, const RoleRecord& caller,
                      const RoleStore::Granted& granted, const std::string& keyspace, const Statement& statement,
                      std::function<void(Plan)> run);

}  // namespace charybdis::cql
