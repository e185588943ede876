#include "core/cql/role_statements.h"

#include "absl/strings/str_cat.h"
#include "core/auth/sasl_plain.h"
#include "core/cql/plan_parts.h"
#include "core/cql/types.h"
#include "core/env/assert.h"

namespace charybdis::cql {
namespace {

Error Unauthorized(std::string message) { return {ErrorCode::kUnauthorized, std::move(message), ""}; }
Error Invalid(std::string message) { return {ErrorCode::kInvalid, std::move(message), ""}; }

std::optional<Error> BadName(const std::string& name) {
  if (name.empty()) return Invalid("a role's name must not be empty");
  if (name.size() > auth::kMaxRoleNameBytes) {
    return Invalid(absl::StrCat("a role's name has at most ", auth::kMaxRoleNameBytes, " bytes"));
  }
  return std::nullopt;
}

std::optional<Error> BadOptions(const RoleOptions& options) {
  if (!options.password) return std::nullopt;
  if (options.password->empty()) return Invalid("a password must not be empty");
  // crypt(3) reads a password up to its first NUL: the rest would be cut.
  if (options.password->find('\0') != std::string::npos) return Invalid("a password must not hold a NUL byte");
  if (options.password->size() > auth::kMaxPasswordBytes) {
    // bcrypt reads no more: a longer one would be cut without a word.
    return Invalid(absl::StrCat("a password has at most ", auth::kMaxPasswordBytes, " bytes"));
  }
  return std::nullopt;
}

std::optional<Error> Refusal(const RoleRecord& caller, const CreateRole& create) {
  if (!caller.is_superuser) return Unauthorized(absl::StrCat("only superusers create roles; ", caller.name, " is not one"));
  if (auto bad = BadName(create.name)) return bad;
  return BadOptions(create.options);
}

std::optional<Error> Refusal(const RoleRecord& caller, const AlterRole& alter) {
  if (alter.name == caller.name && alter.options.superuser) {
    return Unauthorized("You aren't allowed to alter your own superuser status");
  }
  const bool own_password = alter.name == caller.name && !alter.options.login && !alter.options.superuser;
  if (!caller.is_superuser && !own_password) {
    return Unauthorized(absl::StrCat("only superusers alter other roles, or LOGIN and SUPERUSER; ", caller.name,
                                     " may change its own password"));
  }
  if (auto bad = BadName(alter.name)) return bad;
  return BadOptions(alter.options);
}

std::optional<Error> Refusal(const RoleRecord& caller, const DropRole& drop) {
  if (!caller.is_superuser) return Unauthorized(absl::StrCat("only superusers drop roles; ", caller.name, " is not one"));
  if (drop.name == caller.name) return Invalid("Cannot DROP primary role for current login");
  return BadName(drop.name);
}

std::optional<Error> Refusal(const RoleRecord&, const ListRoles&) { return std::nullopt; }

// The resource a GRANT, REVOKE or LIST names, as stored ("data/ks/t"),
// once it exists; `keyspace`: the connection's.
absl::StatusOr<std::string> ResourceOf(const PermissionResource& named, const std::string& keyspace,
                                       const Schema& schema) {
  if (named.keyspace.empty() && named.table.empty()) return auth::AllKeyspacesResource();
  const std::string space = named.keyspace.empty() ? keyspace : named.keyspace;
  if (space == kAuthKeyspace) return absl::InvalidArgumentError("system_auth is no one's to grant: role statements change it");
  if (named.table.empty()) {
    if (schema.FindKeyspace(space) == nullptr) return absl::InvalidArgumentError(absl::StrCat("Resource <keyspace ", space, "> doesn't exist"));
    return auth::KeyspaceResource(space);
  }
  if (schema.FindTable(space, named.table) == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("Resource <table ", space, ".", named.table, "> doesn't exist"));
  }
  return auth::TableResource(space, named.table);
}

// The permissions named, on `resource`: ALL is those that apply to it.
absl::StatusOr<std::vector<auth::Permission>> PermissionsOf(const std::vector<std::string>& names,
                                                            const std::string& resource) {
  const std::vector<auth::Permission> applicable = auth::ApplicablePermissions(resource);
  std::vector<auth::Permission> permissions;
  for (const std::string& name : names) {
    if (name == "ALL") return applicable;
    std::optional<auth::Permission> permission = auth::PermissionNamed(name);
    if (!permission) return absl::InvalidArgumentError(absl::StrCat("unknown permission ", name));
    if (std::find(applicable.begin(), applicable.end(), *permission) == applicable.end()) {
      return absl::InvalidArgumentError(absl::StrCat("Resource type ", auth::ResourceText(resource),
                                                     " does not support the requested permission ", name));
    }
    permissions.push_back(*permission);
  }
  return permissions;
}

void RunGrant(Backend& backend, const RoleRecord& caller, const RoleStore::Granted& granted,
              const std::string& keyspace, const GrantPermissions& grant, std::function<void(Plan)> run) {
  absl::StatusOr<std::string> resource = ResourceOf(grant.resource, keyspace, *backend.CurrentSchema());
  if (!resource.ok()) return run(ErrorPlan(Invalid(std::string(resource.status().message()))));
  absl::StatusOr<std::vector<auth::Permission>> permissions = PermissionsOf(grant.permissions, *resource);
  if (!permissions.ok()) return run(ErrorPlan({ErrorCode::kSyntax, std::string(permissions.status().message()), ""}));
  // A role grants only what it may authorize, and holds itself.
  const auth::RolePermissions mine(caller.is_superuser, granted);
  std::vector<auth::Permission> needed = *permissions;
  needed.push_back(auth::Permission::kAuthorize);
  for (auth::Permission permission : needed) {
    if (mine.Allows({permission, *resource})) continue;
    return run(ErrorPlan(Unauthorized(absl::StrCat("User ", caller.name, " has no ", auth::PermissionName(permission),
                                                   " permission on ", auth::ResourceText(*resource),
                                                   " or any of its parents"))));
  }
  RoleStore(backend).Get(grant.role, [&backend, grant, resource = *resource, permissions = *permissions, run](
                                         std::optional<Error> error, std::optional<RoleRecord> role) {
    if (error) return run(ErrorPlan(*error));
    if (!role) return run(ErrorPlan(Invalid(absl::StrCat("Role ", grant.role, " doesn't exist"))));
    RoleStore(backend).Grant(grant.role, resource, permissions, grant.revoke, [run](std::optional<Error> error) {
      run(error ? ErrorPlan(*error) : Plan{VoidResult(), {}, {}, {}});
    });
  });
}

void RunListPermissions(Backend& backend, const RoleRecord& caller, const std::string& keyspace,
                        const ListPermissions& list, std::function<void(Plan)> run) {
  if (!caller.is_superuser && list.role.value_or(caller.name) != caller.name) {
    return run(ErrorPlan(Unauthorized(absl::StrCat("only superusers list the permissions of other roles; ", caller.name,
                                                   " is not one"))));
  }
  std::optional<std::string> resource;
  if (list.resource) {
    absl::StatusOr<std::string> named = ResourceOf(*list.resource, keyspace, *backend.CurrentSchema());
    if (!named.ok()) return run(ErrorPlan(Invalid(std::string(named.status().message()))));
    resource = *named;
  }
  std::optional<auth::Permission> only;
  if (list.permission != "ALL") {
    only = auth::PermissionNamed(list.permission);
    if (!only) return run(ErrorPlan({ErrorCode::kSyntax, absl::StrCat("unknown permission ", list.permission), ""}));
  }
  const std::optional<std::string> role = caller.is_superuser ? list.role : std::optional<std::string>(caller.name);
  RoleStore(backend).ListGrants(role, [resource, only, run](std::optional<Error> error,
                                                         std::vector<std::pair<std::string, RoleStore::Granted>> grants) {
    if (error) return run(ErrorPlan(*error));
    ResultSet result;
    for (const char* name : {"role", "username", "resource", "permission"}) {
      result.columns.push_back({"system_auth", "role_permissions", name, Type{Kind::kText, {}}});
    }
    for (const auto& [role, granted] : grants) {
      for (const auto& [on, permission] : granted) {
        // ON a resource lists the grants that cover it: its own and its parents'.
        if (resource && !auth::Covers(on, *resource)) continue;
        if (only && permission != *only) continue;
        result.rows.push_back({role, role, auth::ResourceText(on), std::string(auth::PermissionName(permission))});
      }
    }
    run(Plan{RowsResult(result, false), {}, {}, {}});
  });
}

Plan VoidPlan() { return {VoidResult(), {}, {}, {}}; }

// GRANT granted TO role | REVOKE granted FROM role: superusers only (we
// have no permissions on roles yet); both roles must exist, and a grant
// must not close a cycle (Cassandra refuses those too).
void RunGrantRole(Backend& backend, const RoleRecord& caller, const GrantRole& grant, std::function<void(Plan)> run) {
  const char* verb = grant.revoke ? "revoke" : "grant";
  if (!caller.is_superuser) {
    return run(ErrorPlan(Unauthorized(absl::StrCat("only superusers ", verb, " roles; ", caller.name, " is not one"))));
  }
  if (grant.granted == grant.role) return run(ErrorPlan(Invalid(absl::StrCat(grant.role, " is ", grant.role))));
  RoleStore(backend).Get(grant.granted, [&backend, grant, run](std::optional<Error> error,
                                                               std::optional<RoleRecord> granted) {
    if (error) return run(ErrorPlan(*error));
    if (!granted) return run(ErrorPlan(Invalid(absl::StrCat(grant.granted, " doesn't exist"))));
    RoleStore(backend).Get(grant.role, [&backend, grant, run](std::optional<Error> error,
                                                              std::optional<RoleRecord> role) {
      if (error) return run(ErrorPlan(*error));
      if (!role) return run(ErrorPlan(Invalid(absl::StrCat(grant.role, " doesn't exist"))));
      auto write = [&backend, grant, run] {
        RoleStore(backend).GrantRole(grant.granted, grant.role, grant.revoke, [run](std::optional<Error> error) {
          run(error ? ErrorPlan(*error) : VoidPlan());
        });
      };
      if (grant.revoke) return write();
      RoleStore(backend).HeldRoles(grant.granted, [&backend, grant, run, write](std::optional<Error> error,
                                                                                std::set<std::string> held) {
        if (error) return run(ErrorPlan(*error));
        if (held.count(grant.role)) {
          return run(ErrorPlan(Invalid(absl::StrCat(grant.role, " is a member of ", grant.granted))));
        }
        // The grantee's roles with the grant must stay within the bound.
        RoleStore(backend).HeldRoles(grant.role, [run, write, held](std::optional<Error> error,
                                                                    std::set<std::string> grantee) {
          if (error) return run(ErrorPlan(*error));
          grantee.insert(held.begin(), held.end());
          if (grantee.size() > kMaxHeldRoles) {
            return run(ErrorPlan(Invalid(absl::StrCat("a role may hold at most ", kMaxHeldRoles, " roles"))));
          }
          write();
        });
      });
    });
  });
}

// The write of a CREATE, ALTER or DROP ROLE, once the password (if any) is
// hashed.
void Write(Backend& backend, const Statement& statement, std::optional<std::string> hash,
           std::function<void(Plan)> run) {
  RoleStore store(backend);
  auto answer = [run](std::optional<Error> error, bool applied, std::optional<Error> when_not_applied) {
    if (error) return run(ErrorPlan(*error));
    if (!applied && when_not_applied) return run(ErrorPlan(*when_not_applied));
    run(VoidPlan());
  };
  if (const auto* create = std::get_if<CreateRole>(&statement)) {
    RoleRecord role{create->name, create->options.login.value_or(false), create->options.superuser.value_or(false),
                    hash.value_or("")};
    std::optional<Error> exists;
    if (!create->if_not_exists) exists = Invalid(absl::StrCat(create->name, " already exists"));
    return store.Create(role, [&backend, name = create->name, answer, exists](std::optional<Error> error, bool applied) {
      if (error || !applied) return answer(error, applied, exists);
      // A GRANT that raced a DROP ROLE of an earlier role of this name may
      // have written after the drop removed its grants: a new role starts
      // with none.
      RoleStore(backend).RevokeAll(name, [answer](std::optional<Error> error) { answer(error, true, std::nullopt); });
    });
  }
  if (const auto* alter = std::get_if<AlterRole>(&statement)) {
    const Error missing = Invalid(absl::StrCat(alter->name, " doesn't exist"));
    return store.Alter(alter->name, alter->options.login, alter->options.superuser, hash,
                       [answer, missing](std::optional<Error> error, bool applied) { answer(error, applied, missing); });
  }
  const auto& drop = std::get<DropRole>(statement);
  std::optional<Error> missing;
  if (!drop.if_exists) missing = Invalid(absl::StrCat(drop.name, " doesn't exist"));
  // Its grants go first: a role created again under the name starts with none.
  store.RevokeAll(drop.name, [&backend, name = drop.name, answer, missing](std::optional<Error> error) {
    if (error) return answer(error, false, std::nullopt);
    RoleStore(backend).Drop(name, [answer, missing](std::optional<Error> error, bool applied) {
      answer(error, applied, missing);
    });
  });
}

}  // namespace

void RunRoleStatement(Backend& backend, AuthService& auth, const RoleRecord& caller,
                      const RoleStore::Granted& granted, const std::string& keyspace, const Statement& statement,
                      std::function<void(Plan)> run) {
  CHARYBDIS_ASSERT(IsRoleStatement(statement));
  if (const auto* grant = std::get_if<GrantPermissions>(&statement)) {
    return RunGrant(backend, caller, granted, keyspace, *grant, std::move(run));
  }
  if (const auto* list = std::get_if<ListPermissions>(&statement)) {
    return RunListPermissions(backend, caller, keyspace, *list, std::move(run));
  }
  if (const auto* role_grant = std::get_if<GrantRole>(&statement)) {
    return RunGrantRole(backend, caller, *role_grant, std::move(run));
  }
  std::optional<Error> refusal;
  if (const auto* create = std::get_if<CreateRole>(&statement)) refusal = Refusal(caller, *create);
  if (const auto* alter = std::get_if<AlterRole>(&statement)) refusal = Refusal(caller, *alter);
  if (const auto* drop = std::get_if<DropRole>(&statement)) refusal = Refusal(caller, *drop);
  if (refusal) return run(ErrorPlan(*refusal));
  if (std::holds_alternative<ListRoles>(statement)) {
    // A superuser lists every role; any other role, itself.
    return run(RoleStore(backend).List(caller.is_superuser ? std::nullopt : std::optional<std::string>(caller.name)));
  }
  const RoleOptions* options = nullptr;
  if (const auto* create = std::get_if<CreateRole>(&statement)) options = &create->options;
  if (const auto* alter = std::get_if<AlterRole>(&statement)) options = &alter->options;
  if (options == nullptr || !options->password) return Write(backend, statement, std::nullopt, std::move(run));
  auth.hasher().Hash(*options->password, [&backend, statement, run](std::string hash) {
    if (hash.empty()) return run(ErrorPlan({ErrorCode::kServer, "the password could not be hashed", ""}));
    Write(backend, statement, std::move(hash), run);
  });
}

}  // namespace charybdis::cql
