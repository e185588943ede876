#pragma once

// Permissions on resources, as Cassandra's CassandraAuthorizer has them
// (docs/security.md): SELECT, MODIFY, CREATE, ALTER, DROP and AUTHORIZE,
// granted on ALL KEYSPACES ("data"), a keyspace ("data/ks") or a table
// ("data/ks/table"); a grant on a resource covers everything under it.

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace charybdis::auth {

enum class Permission { kSelect, kModify, kCreate, kAlter, kDrop, kAuthorize };

// Every permission, in the order LIST PERMISSIONS shows them.
const std::vector<Permission>& AllPermissions();
const char* PermissionName(Permission permission);  // "SELECT", ...
// Case-insensitive; nullopt for a name of no permission.
std::optional<Permission> PermissionNamed(const std::string& name);

// Names are escaped inside resources ('/' as %2F, '%' as %25): a quoted
// name may hold a '/', which would make it another resource's child.
std::string AllKeyspacesResource();
std::string KeyspaceResource(const std::string& keyspace);
std::string TableResource(const std::string& keyspace, const std::string& table);
// Whether `resource` is `under` or one of its parents: a grant on it
// covers `under` ("data/ks" covers "data/ks" and "data/ks/t", not "data/ks2").
bool Covers(const std::string& resource, const std::string& under);
// How CQL names a resource: "<all keyspaces>", "<keyspace ks>", "<table ks.t>".
std::string ResourceText(const std::string& resource);
// The permissions a resource can be granted: CREATE only where something
// can be created under it (not a table).
std::vector<Permission> ApplicablePermissions(const std::string& resource);

// What a statement needs: `permission` on `resource`.
struct Needed {
  Permission permission;
  std::string resource;
  bool operator<(const Needed& other) const {
    return std::tie(permission, resource) < std::tie(other.permission, other.resource);
  }
  bool operator==(const Needed& other) const = default;
};

// What one role may do, as loaded from system_auth.
class RolePermissions {
 public:
  RolePermissions() = default;
  RolePermissions(bool superuser, std::set<std::pair<std::string, Permission>> granted)
      : superuser_(superuser), granted_(std::move(granted)) {}

  bool superuser() const { return superuser_; }
  // Superusers may do anything; others what was granted on the resource
  // or one of its parents.
  bool Allows(const Needed& needed) const;

 private:
  bool superuser_ = false;
  std::set<std::pair<std::string, Permission>> granted_;  // resource, permission
};

}  // namespace charybdis::auth
