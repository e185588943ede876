#pragma once

// The roles of system_auth.roles (docs/security.md), read and written at
// QUORUM through a connection's Backend, conditional writes at SERIAL:
// two coordinators creating one role cannot both succeed, and a login
// never reads a role older than the last acknowledged change. Every
// answer comes on the backend's connection thread (Backend::Post).

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <set>

#include "core/auth/permissions.h"
#include "core/cql/connection.h"

namespace charybdis::cql {

constexpr char kAuthKeyspace[] = "system_auth";
constexpr char kRolesTable[] = "roles";

// The statements that make system_auth: its keyspace, with up to three
// replicas in each datacenter the node knows of (fewer where a datacenter
// has fewer nodes: QUORUM must be reachable), then its table.
std::string CreateAuthKeyspaceStatement(const ClusterView& cluster);
extern const char kCreateRolesTableStatement[];
extern const char kCreateRolePermissionsTableStatement[];
constexpr char kRolePermissionsTable[] = "role_permissions";
extern const char kCreateRoleMembersTableStatement[];
constexpr char kRoleMembersTable[] = "role_members";
// How many roles a role may hold through grants of roles, itself included:
// a bound on the reads a permission check makes.
constexpr size_t kMaxHeldRoles = 32;

struct RoleRecord {
  std::string name;
  bool can_login = false;
  bool is_superuser = false;
  std::string salted_hash;  // empty: no password, no login by password
};

class RoleStore {
 public:
  // `error` set: the request failed (unavailable, timed out, or system_auth
  // not there yet); nothing else is.
  using Found = std::function<void(std::optional<Error> error, std::optional<RoleRecord> role)>;
  using Applied = std::function<void(std::optional<Error> error, bool applied)>;

  explicit RoleStore(Backend& backend) : backend_(backend) {}

  void Get(const std::string& name, Found done);
  // Creates the role unless it exists (`applied` false then).
  void Create(const RoleRecord& role, Applied done);
  // Sets what is given of an existing role (`applied` false: no such role).
  void Alter(const std::string& name, std::optional<bool> login, std::optional<bool> superuser,
             std::optional<std::string> salted_hash, Applied done);
  // Removes an existing role (`applied` false: no such role).
  void Drop(const std::string& name, Applied done);
  // LIST ROLES: every role, or only `only`, as rows of role, super, login.
  Plan List(const std::optional<std::string>& only);

  // Permissions (docs/security.md): one row per role, resource and
  // permission of system_auth.role_permissions.
  using Granted = std::set<std::pair<std::string, auth::Permission>>;  // resource, permission
  void LoadPermissions(const std::string& role, std::function<void(std::optional<Error>, Granted)> done);
  // Every role's grants (`role` null), or one role's.
  void ListGrants(const std::optional<std::string>& role,
                  std::function<void(std::optional<Error>, std::vector<std::pair<std::string, Granted>>)> done);
  // Adds (or, with `revoke`, removes) `permissions` of `role` on `resource`.
  void Grant(const std::string& role, const std::string& resource, const std::vector<auth::Permission>& permissions,
             bool revoke, std::function<void(std::optional<Error>)> done);
  // A logged-in role as it is now, and its grants with those of every role
  // it holds through GRANT role TO role (a superuser if any of them is
  // one): what each statement's check needs. An Unauthorized error when
  // the role was dropped or may no longer log in.
  void LoadCaller(const std::string& role,
                  std::function<void(std::optional<Error>, RoleRecord, Granted)> done);
  // Removes every grant of `role` (DROP ROLE), of permissions and of roles,
  // and every grant of it to other roles.
  void RevokeAll(const std::string& role, std::function<void(std::optional<Error>)> done);

  // Removes every grant on `resource` and on what is under it, of every
  // role (a dropped keyspace's or table's).
  void RevokeOn(const std::string& resource, std::function<void(std::optional<Error>)> done);
  // What a schema change does to grants once it changed the schema,
  // through CQL or the gRPC client API alike: the role that made it gets
  // every permission that applies on what it created (Cassandra's rule),
  // and what it dropped takes every grant on it and under it along, so
  // that one created again under its name starts with none. At once when
  // it did neither.
  void FollowSchemaChange(const std::string& role, const std::optional<std::string>& created,
                          const std::optional<std::string>& dropped, std::function<void(std::optional<Error>)> done);

  // Roles granted to roles (system_auth.role_members, one row per grant).
  // The roles granted to `role` directly.
  void MemberOf(const std::string& role, std::function<void(std::optional<Error>, std::set<std::string>)> done);
  // `role` and every role it holds through grants, transitively, up to
  // kMaxHeldRoles of them (in the order the grants are read).
  void HeldRoles(const std::string& role, std::function<void(std::optional<Error>, std::set<std::string>)> done);
  // GRANT granted TO role (or, with `revoke`, REVOKE ... FROM).
  void GrantRole(const std::string& granted, const std::string& role, bool revoke,
                 std::function<void(std::optional<Error>)> done);

 private:
  // Runs the one request of `query`'s plan, its values bound, and hands
  // its answer over on the connection thread.
  void RunOne(const std::string& query, std::vector<std::optional<std::string>> values, ConsistencyLevel level,
              std::function<void(std::optional<Error>, const Prepared*, const ClientResponse&)> done);
  // Runs a SELECT's whole plan at QUORUM; its rows' values by column.
  void Select(const std::string& query, std::vector<std::optional<std::string>> values,
              std::function<void(std::optional<Error>, std::vector<ResultRow>)> done);
  // Walks HeldRoles from `held` (every role found so far) and `next` (those
  // whose grants are not read yet).
  void WalkHeld(std::set<std::string> held, std::vector<std::string> next,
                std::function<void(std::optional<Error>, std::set<std::string>)> done);
  // The permissions of `roles` together, and whether any is a superuser.
  void LoadAll(std::vector<std::string> roles, Granted granted, bool superuser,
               std::function<void(std::optional<Error>, Granted, bool)> done);
  // Removes every grant of a role to `role` and of `role` to a role.
  void RevokeRoleGrants(const std::string& role, std::function<void(std::optional<Error>)> done);
  // Runs each write at QUORUM, all at once; the first error, if any.
  void WriteAll(std::vector<std::pair<std::string, std::vector<std::optional<std::string>>>> writes,
                std::function<void(std::optional<Error>)> done);

  Backend& backend_;
};

}  // namespace charybdis::cql
