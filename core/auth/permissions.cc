#include "core/auth/permissions.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/env/assert.h"

namespace charybdis::auth {
namespace {

constexpr char kRoot[] = "data";

// A name inside a resource: '/' separates a resource's parts, so a name
// holding one (quoted names may) is escaped, with '%' itself, as in URLs.
std::string Escaped(const std::string& name) {
  std::string escaped;
  for (char c : name) {
    if (c == '%') {
      escaped += "%25";
    } else if (c == '/') {
      escaped += "%2F";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

std::string Unescaped(const std::string& part) {
  std::string name;
  for (size_t i = 0; i < part.size(); i++) {
    if (part[i] == '%' && part.compare(i, 3, "%2F") == 0) {
      name += '/';
      i += 2;
    } else if (part[i] == '%' && part.compare(i, 3, "%25") == 0) {
      name += '%';
      i += 2;
    } else {
      name += part[i];
    }
  }
  return name;
}

}  // namespace

const std::vector<Permission>& AllPermissions() {
  static const std::vector<Permission> all = {Permission::kCreate, Permission::kAlter,  Permission::kDrop,
                                              Permission::kSelect, Permission::kModify, Permission::kAuthorize};
  return all;
}

const char* PermissionName(Permission permission) {
  switch (permission) {
    case Permission::kSelect: return "SELECT";
    case Permission::kModify: return "MODIFY";
    case Permission::kCreate: return "CREATE";
    case Permission::kAlter: return "ALTER";
    case Permission::kDrop: return "DROP";
    case Permission::kAuthorize: return "AUTHORIZE";
  }
  CHARYBDIS_ASSERT(false);  // every permission is named above
  return "";
}

std::optional<Permission> PermissionNamed(const std::string& name) {
  std::string upper = name;
  absl::AsciiStrToUpper(&upper);
  for (Permission permission : AllPermissions()) {
    if (upper == PermissionName(permission)) return permission;
  }
  return std::nullopt;
}

std::string AllKeyspacesResource() { return kRoot; }
std::string KeyspaceResource(const std::string& keyspace) { return absl::StrCat(kRoot, "/", Escaped(keyspace)); }
std::string TableResource(const std::string& keyspace, const std::string& table) {
  return absl::StrCat(kRoot, "/", Escaped(keyspace), "/", Escaped(table));
}

std::string ResourceText(const std::string& resource) {
  const std::vector<std::string> parts = absl::StrSplit(resource, '/');
  if (parts.size() == 2) return absl::StrCat("<keyspace ", Unescaped(parts[1]), ">");
  if (parts.size() == 3) return absl::StrCat("<table ", Unescaped(parts[1]), ".", Unescaped(parts[2]), ">");
  return "<all keyspaces>";
}

std::vector<Permission> ApplicablePermissions(const std::string& resource) {
  std::vector<Permission> applicable;
  const bool table = std::count(resource.begin(), resource.end(), '/') == 2;
  for (Permission permission : AllPermissions()) {
    if (!(table && permission == Permission::kCreate)) applicable.push_back(permission);
  }
  return applicable;
}

bool Covers(const std::string& resource, const std::string& under) {
  return under == resource || under.rfind(resource + "/", 0) == 0;
}

bool RolePermissions::Allows(const Needed& needed) const {
  if (superuser_) return true;
  // The resource, then each parent: "data/ks/t", "data/ks", "data".
  std::string resource = needed.resource;
  while (true) {
    if (granted_.count({resource, needed.permission})) return true;
    const size_t slash = resource.rfind('/');
    if (slash == std::string::npos) return false;
    resource.resize(slash);
  }
}

}  // namespace charybdis::auth
