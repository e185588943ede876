#include "core/cql/role_store.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/cql/wire.h"
#include "core/cql/plan_parts.h"
#include "core/cql/types.h"
#include "core/env/assert.h"

namespace charybdis::cql {
namespace {

constexpr uint32_t kMaxReplicasPerDatacenter = 3;

const char kSelectRole[] = "SELECT can_login, is_superuser, salted_hash FROM system_auth.roles WHERE role = ?";
const char kInsertRole[] =
    "INSERT INTO system_auth.roles (role, can_login, is_superuser, salted_hash) VALUES (?, ?, ?, ?) IF NOT EXISTS";
const char kDeleteRole[] = "DELETE FROM system_auth.roles WHERE role = ? IF EXISTS";

std::optional<std::string> Text(const std::string& value) { return value; }

using Writes = std::vector<std::pair<std::string, std::vector<std::optional<std::string>>>>;

const char kDeletePermission[] =
    "DELETE FROM system_auth.role_permissions WHERE role = ? AND resource = ? AND permission = ?";

void AppendPermissionWrite(const char* query, const std::string& role, const std::string& resource,
                           auth::Permission permission, Writes& writes) {
  writes.push_back({query, {Text(role), Text(resource), Text(auth::PermissionName(permission))}});
}

// The rows of a Rows result without metadata (skip_metadata), every page
// at once.
absl::StatusOr<std::vector<ResultRow>> RowsOf(const Response& response) {
  Reader in(response.body);
  if (response.opcode != Opcode::kResult || in.Int() != 2) return absl::InternalError("not a Rows result");
  const int32_t flags = in.Int();
  const int32_t columns = in.Int();
  if ((flags & 0x0002) != 0) return absl::InternalError("a read of system_auth came back in pages");
  std::vector<ResultRow> rows(std::max(0, in.Int()));
  for (ResultRow& row : rows) {
    for (int32_t i = 0; i < columns && in.ok(); i++) row.push_back(in.Bytes().bytes);
  }
  if (!in.ok()) return absl::InternalError("a malformed Rows result");
  return rows;
}

// The error of a response that is not a result.
std::optional<Error> ErrorIn(const Response& response) {
  if (response.opcode != Opcode::kError) return std::nullopt;
  Reader in(response.body);
  Error error;
  error.code = static_cast<ErrorCode>(in.Int());
  error.message = in.String();
  return error;
}
std::optional<std::string> Boolean(bool value) { return NativeBoolean(value); }

}  // namespace

const char kCreateRolesTableStatement[] =
    "CREATE TABLE IF NOT EXISTS system_auth.roles (role text PRIMARY KEY, can_login boolean, is_superuser boolean, "
    "salted_hash text)";

const char kCreateRoleMembersTableStatement[] =
    "CREATE TABLE IF NOT EXISTS system_auth.role_members (role text, member_of text, PRIMARY KEY (role, member_of))";

const char kCreateRolePermissionsTableStatement[] =
    "CREATE TABLE IF NOT EXISTS system_auth.role_permissions (role text, resource text, permission text, "
    "PRIMARY KEY (role, resource, permission))";

std::string CreateAuthKeyspaceStatement(const ClusterView& cluster) {
  std::map<std::string, uint32_t> nodes;
  nodes[cluster.local.datacenter]++;
  for (const HostInfo& peer : cluster.peers) nodes[peer.datacenter]++;
  std::vector<std::string> factors;
  for (const auto& [datacenter, count] : nodes) {
    CHARYBDIS_ASSERT(count >= 1);
    factors.push_back(absl::StrCat("'", datacenter, "': ", std::min(count, kMaxReplicasPerDatacenter)));
  }
  return absl::StrCat("CREATE KEYSPACE IF NOT EXISTS system_auth WITH replication = {'class': 'NetworkTopologyStrategy', ",
                      absl::StrJoin(factors, ", "), "}");
}

void RoleStore::RunOne(const std::string& query, std::vector<std::optional<std::string>> values,
                       ConsistencyLevel level,
                       std::function<void(std::optional<Error>, const Prepared*, const ClientResponse&)> done) {
  const std::shared_ptr<const Schema> schema = backend_.CurrentSchema();
  PrepareResult prepared = Prepare(*schema, "", query);
  if (!prepared.prepared) {
    // system_auth is not in this node's schema yet (or was never made).
    Error error{ErrorCode::kServer, absl::StrCat("system_auth is not ready: ", prepared.error.message), ""};
    return backend_.Post([done, error] { done(error, nullptr, ClientResponse()); });
  }
  QueryOptions options;
  options.consistency = level;
  options.serial_consistency = CL_SERIAL;
  for (auto& value : values) options.values.push_back(Value{false, std::move(value)});
  Plan plan = PlanExecution(prepared.prepared, options, *schema, backend_.Cluster());
  if (plan.response || plan.requests.size() != 1) {
    Error error{ErrorCode::kServer, absl::StrCat("cannot run '", query, "' on system_auth"), ""};
    return backend_.Post([done, error] { done(error, nullptr, ClientResponse()); });
  }
  // The answer comes on a shard's thread, perhaps after this backend is
  // gone (a node shutting down): it holds the poster, not the backend.
  backend_.Execute(std::move(plan.requests[0]), [post = backend_.Poster(), done, shared = prepared.prepared](
                                                    ClientResponse response) {
    post([done, shared, response = std::move(response)] {
      if (response.code() != ClientResponse::OK) return done(ErrorOf(response, shared->conditional), shared.get(), response);
      done(std::nullopt, shared.get(), response);
    });
  });
}

void RoleStore::Get(const std::string& name, Found done) {
  RunOne(kSelectRole, {Text(name)}, CL_QUORUM,
         [name, done](std::optional<Error> error, const Prepared* prepared, const ClientResponse& response) {
           if (error) return done(error, std::nullopt);
           if (response.rows().empty()) return done(std::nullopt, std::nullopt);
           CHARYBDIS_ASSERT(response.rows_size() == 1);  // one partition, no clustering columns
           const ResultRow row = AssembleRow(*prepared->table, prepared->result_columns, {name}, response.rows(0));
           CHARYBDIS_ASSERT(row.size() == 3);
           RoleRecord role{name, row[0] == NativeBoolean(true), row[1] == NativeBoolean(true), row[2].value_or("")};
           done(std::nullopt, role);
         });
}

void RoleStore::Create(const RoleRecord& role, Applied done) {
  RunOne(kInsertRole,
         {Text(role.name), Boolean(role.can_login), Boolean(role.is_superuser),
          role.salted_hash.empty() ? std::nullopt : Text(role.salted_hash)},
         CL_QUORUM, [done](std::optional<Error> error, const Prepared*, const ClientResponse& response) {
           done(error, !error && response.applied());
         });
}

void RoleStore::Alter(const std::string& name, std::optional<bool> login, std::optional<bool> superuser,
                      std::optional<std::string> salted_hash, Applied done) {
  std::vector<std::string> sets;
  std::vector<std::optional<std::string>> values;
  if (login) {
    sets.push_back("can_login = ?");
    values.push_back(Boolean(*login));
  }
  if (superuser) {
    sets.push_back("is_superuser = ?");
    values.push_back(Boolean(*superuser));
  }
  if (salted_hash) {
    sets.push_back("salted_hash = ?");
    values.push_back(Text(*salted_hash));
  }
  CHARYBDIS_ASSERT(!sets.empty());  // ALTER ROLE names at least one option
  values.push_back(Text(name));
  RunOne(absl::StrCat("UPDATE system_auth.roles SET ", absl::StrJoin(sets, ", "), " WHERE role = ? IF EXISTS"),
         std::move(values), CL_QUORUM, [done](std::optional<Error> error, const Prepared*, const ClientResponse& response) {
           done(error, !error && response.applied());
         });
}

void RoleStore::Drop(const std::string& name, Applied done) {
  RunOne(kDeleteRole, {Text(name)}, CL_QUORUM,
         [done](std::optional<Error> error, const Prepared*, const ClientResponse& response) {
           done(error, !error && response.applied());
         });
}

void RoleStore::Select(const std::string& query, std::vector<std::optional<std::string>> values,
                       std::function<void(std::optional<Error>, std::vector<ResultRow>)> done) {
  const std::shared_ptr<const Schema> schema = backend_.CurrentSchema();
  PrepareResult prepared = Prepare(*schema, "", query);
  if (!prepared.prepared) {
    Error error{ErrorCode::kServer, absl::StrCat("system_auth is not ready: ", prepared.error.message), ""};
    return backend_.Post([done, error] { done(error, {}); });
  }
  QueryOptions options;
  options.consistency = CL_QUORUM;
  options.skip_metadata = true;
  for (auto& value : values) options.values.push_back(Value{false, std::move(value)});
  Plan plan = PlanExecution(prepared.prepared, options, *schema, backend_.Cluster());
  // The plan's answer, as a frame (RunPlan's), decoded back into rows.
  RunPlan(backend_, [post = backend_.Poster(), done](std::string frame) {
    const Response response{static_cast<Opcode>(ParseHeader(frame).opcode), frame.substr(kHeaderBytes)};
    post([done, response] {
      if (std::optional<Error> error = ErrorIn(response)) return done(error, {});
      absl::StatusOr<std::vector<ResultRow>> rows = RowsOf(response);
      if (!rows.ok()) return done(Error{ErrorCode::kServer, std::string(rows.status().message()), ""}, {});
      done(std::nullopt, std::move(*rows));
    });
  }, 0, std::move(plan));
}

void RoleStore::WriteAll(std::vector<std::pair<std::string, std::vector<std::optional<std::string>>>> writes,
                         std::function<void(std::optional<Error>)> done) {
  if (writes.empty()) return backend_.Post([done] { done(std::nullopt); });
  // Answers come on the connection thread, one at a time.
  struct Gathering {
    size_t remaining = 0;
    std::optional<Error> error;
  };
  auto gathering = std::make_shared<Gathering>();
  gathering->remaining = writes.size();
  for (auto& [query, values] : writes) {
    RunOne(query, std::move(values), CL_QUORUM, [gathering, done](std::optional<Error> error, const Prepared*,
                                                                   const ClientResponse&) {
      if (error && !gathering->error) gathering->error = error;
      CHARYBDIS_ASSERT(gathering->remaining > 0);
      if (--gathering->remaining == 0) done(gathering->error);
    });
  }
}

void RoleStore::LoadPermissions(const std::string& role, std::function<void(std::optional<Error>, Granted)> done) {
  Select("SELECT resource, permission FROM system_auth.role_permissions WHERE role = ?", {Text(role)},
         [done](std::optional<Error> error, std::vector<ResultRow> rows) {
           Granted granted;
           for (const ResultRow& row : rows) {
             CHARYBDIS_ASSERT(row.size() == 2);
             std::optional<auth::Permission> permission = auth::PermissionNamed(row[1].value_or(""));
             if (permission && row[0]) granted.emplace(*row[0], *permission);
           }
           done(error, std::move(granted));
         });
}

void RoleStore::ListGrants(const std::optional<std::string>& role,
                           std::function<void(std::optional<Error>, std::vector<std::pair<std::string, Granted>>)> done) {
  std::string query = "SELECT role, resource, permission FROM system_auth.role_permissions";
  std::vector<std::optional<std::string>> values;
  if (role) {
    query += " WHERE role = ?";
    values.push_back(Text(*role));
  }
  Select(query, std::move(values), [done](std::optional<Error> error, std::vector<ResultRow> rows) {
    std::map<std::string, Granted> by_role;
    for (const ResultRow& row : rows) {
      CHARYBDIS_ASSERT(row.size() == 3);
      std::optional<auth::Permission> permission = auth::PermissionNamed(row[2].value_or(""));
      if (permission && row[0] && row[1]) by_role[*row[0]].emplace(*row[1], *permission);
    }
    done(error, std::vector<std::pair<std::string, Granted>>(by_role.begin(), by_role.end()));
  });
}

void RoleStore::Grant(const std::string& role, const std::string& resource,
                      const std::vector<auth::Permission>& permissions, bool revoke,
                      std::function<void(std::optional<Error>)> done) {
  const char* query = revoke ? kDeletePermission
                             : "INSERT INTO system_auth.role_permissions (role, resource, permission) VALUES (?, ?, ?)";
  Writes writes;
  for (auth::Permission permission : permissions) AppendPermissionWrite(query, role, resource, permission, writes);
  WriteAll(std::move(writes), std::move(done));
}

void RoleStore::LoadCaller(const std::string& role,
                           std::function<void(std::optional<Error>, RoleRecord, Granted)> done) {
  Backend& backend = backend_;
  Get(role, [&backend, role, done](std::optional<Error> error, std::optional<RoleRecord> caller) {
    if (error) return done(error, {}, {});
    if (!caller || !caller->can_login) {
      return done(Error{ErrorCode::kUnauthorized, absl::StrCat(role, " was dropped or may no longer log in"), ""}, {},
                  {});
    }
    RoleStore(backend).HeldRoles(role, [&backend, done, caller = *caller](std::optional<Error> error,
                                                                           std::set<std::string> held) {
      if (error) return done(error, {}, {});
      held.erase(caller.name);  // read above
      RoleStore(backend).LoadPermissions(caller.name, [&backend, done, caller, held](std::optional<Error> error,
                                                                                     Granted granted) {
        if (error) return done(error, {}, {});
        RoleStore(backend).LoadAll({held.begin(), held.end()}, std::move(granted), caller.is_superuser,
                                   [done, caller](std::optional<Error> error, Granted granted, bool superuser) mutable {
                                     caller.is_superuser = superuser;
                                     done(error, caller, std::move(granted));
                                   });
      });
    });
  });
}

void RoleStore::LoadAll(std::vector<std::string> roles, Granted granted, bool superuser,
                        std::function<void(std::optional<Error>, Granted, bool)> done) {
  if (roles.empty()) return done(std::nullopt, std::move(granted), superuser);
  const std::string role = roles.back();
  roles.pop_back();
  Backend& backend = backend_;
  // A held role's superuser status counts; a dropped one holds nothing.
  Get(role, [&backend, role, roles, granted, superuser, done](std::optional<Error> error,
                                                              std::optional<RoleRecord> record) mutable {
    if (error) return done(error, {}, false);
    if (!record) return RoleStore(backend).LoadAll(std::move(roles), std::move(granted), superuser, done);
    superuser = superuser || record->is_superuser;
    RoleStore(backend).LoadPermissions(role, [&backend, roles, granted, superuser, done](
                                                 std::optional<Error> error, Granted more) mutable {
      if (error) return done(error, {}, false);
      granted.insert(more.begin(), more.end());
      RoleStore(backend).LoadAll(std::move(roles), std::move(granted), superuser, done);
    });
  });
}

void RoleStore::MemberOf(const std::string& role,
                         std::function<void(std::optional<Error>, std::set<std::string>)> done) {
  Select("SELECT member_of FROM system_auth.role_members WHERE role = ?", {Text(role)},
         [done](std::optional<Error> error, std::vector<ResultRow> rows) {
           std::set<std::string> granted;
           for (const ResultRow& row : rows) {
             CHARYBDIS_ASSERT(row.size() == 1);
             if (row[0]) granted.insert(*row[0]);
           }
           done(error, std::move(granted));
         });
}

void RoleStore::HeldRoles(const std::string& role,
                          std::function<void(std::optional<Error>, std::set<std::string>)> done) {
  WalkHeld({role}, {role}, std::move(done));
}

void RoleStore::WalkHeld(std::set<std::string> held, std::vector<std::string> next,
                         std::function<void(std::optional<Error>, std::set<std::string>)> done) {
  if (next.empty()) return done(std::nullopt, std::move(held));
  const std::string role = next.back();
  next.pop_back();
  Backend& backend = backend_;
  MemberOf(role, [&backend, held, next, done](std::optional<Error> error, std::set<std::string> granted) mutable {
    if (error) return done(error, {});
    for (const std::string& one : granted) {
      // Past the bound a role holds no more: fewer permissions, never
      // more, and no role locked out (GRANT keeps grantees within it).
      if (held.size() >= kMaxHeldRoles) break;
      if (held.insert(one).second) next.push_back(one);
    }
    RoleStore(backend).WalkHeld(std::move(held), std::move(next), done);
  });
}

void RoleStore::GrantRole(const std::string& granted, const std::string& role, bool revoke,
                          std::function<void(std::optional<Error>)> done) {
  WriteAll({{revoke ? "DELETE FROM system_auth.role_members WHERE role = ? AND member_of = ?"
                    : "INSERT INTO system_auth.role_members (role, member_of) VALUES (?, ?)",
             {Text(role), Text(granted)}}},
           std::move(done));
}

void RoleStore::RevokeRoleGrants(const std::string& role, std::function<void(std::optional<Error>)> done) {
  // Grants of `role` to others are found by reading them all: the table is
  // small, and it has no index by member_of.
  Backend& backend = backend_;
  Select("SELECT role, member_of FROM system_auth.role_members", {},
         [&backend, role, done](std::optional<Error> error, std::vector<ResultRow> rows) {
           if (error) return done(error);
           Writes writes;
           for (const ResultRow& row : rows) {
             CHARYBDIS_ASSERT(row.size() == 2);
             if (row[0] != role && row[1] != role) continue;
             writes.push_back({"DELETE FROM system_auth.role_members WHERE role = ? AND member_of = ?", {row[0], row[1]}});
           }
           RoleStore(backend).WriteAll(std::move(writes), done);
         });
}

void RoleStore::FollowSchemaChange(const std::string& role, const std::optional<std::string>& created,
                                   const std::optional<std::string>& dropped,
                                   std::function<void(std::optional<Error>)> done) {
  CHARYBDIS_ASSERT(!(created && dropped));
  Backend& backend = backend_;
  auto counted = [&backend, done = std::move(done)](std::optional<Error> error) {
    // The schema change stands: a superuser grants or revokes by hand.
    if (error) CHARYBDIS_PROBE(backend.probes(), "auth.schema_change_grants_failed");
    done(std::move(error));
  };
  if (created) return Grant(role, *created, auth::ApplicablePermissions(*created), /*revoke=*/false, counted);
  if (dropped) return RevokeOn(*dropped, counted);
  counted(std::nullopt);
}

void RoleStore::RevokeOn(const std::string& resource, std::function<void(std::optional<Error>)> done) {
  Backend& backend = backend_;
  ListGrants(std::nullopt, [&backend, resource, done](std::optional<Error> error,
                                                      std::vector<std::pair<std::string, Granted>> grants) {
    if (error) return done(error);
    Writes writes;
    for (const auto& [role, granted] : grants) {
      for (const auto& [on, permission] : granted) {
        if (auth::Covers(resource, on)) AppendPermissionWrite(kDeletePermission, role, on, permission, writes);
      }
    }
    RoleStore(backend).WriteAll(std::move(writes), done);
  });
}

void RoleStore::RevokeAll(const std::string& role, std::function<void(std::optional<Error>)> done) {
  // Row by row: a partition delete is not in our CQL yet (issue 34).
  Backend& backend = backend_;
  LoadPermissions(role, [&backend, role, done](std::optional<Error> error, Granted granted) {
    if (error) return done(error);
    Writes writes;
    for (const auto& [resource, permission] : granted) {
      AppendPermissionWrite(kDeletePermission, role, resource, permission, writes);
    }
    RoleStore(backend).WriteAll(std::move(writes), [&backend, role, done](std::optional<Error> error) {
      if (error) return done(error);
      RoleStore(backend).RevokeRoleGrants(role, done);
    });
  });
}

Plan RoleStore::List(const std::optional<std::string>& only) {
  const std::shared_ptr<const Schema> schema = backend_.CurrentSchema();
  std::string query = "SELECT role, is_superuser, can_login FROM system_auth.roles";
  QueryOptions options;
  options.consistency = CL_QUORUM;
  if (only) {
    query += " WHERE role = ?";
    options.values.push_back(Value{false, Text(*only)});
  }
  PrepareResult prepared = Prepare(*schema, "", query);
  if (!prepared.prepared) return ErrorPlan({ErrorCode::kServer, "system_auth is not ready: " + prepared.error.message, ""});
  return PlanExecution(prepared.prepared, options, *schema, backend_.Cluster());
}

}  // namespace charybdis::cql
