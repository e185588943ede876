// A connection's login and role statements (docs/security.md).

#include "absl/strings/str_cat.h"
#include "core/auth/sasl_plain.h"
#include "core/cql/auth_service.h"
#include "core/cql/connection.h"
#include "core/cql/login.h"
#include "core/cql/permission_checks.h"
#include "core/cql/plan_parts.h"
#include "core/cql/role_statements.h"
#include "core/cql/role_store.h"
#include "core/cql/schema_change.h"
#include "core/env/assert.h"

namespace charybdis::cql {
namespace {

Response BadCredentials(std::string message) {
  return ErrorResponse({ErrorCode::kBadCredentials, std::move(message), ""});
}

}  // namespace

bool Connection::AuthResponse(int16_t stream, std::string_view body) {
  CHARYBDIS_ASSERT(!authenticated_);  // OnFrame takes AUTH_RESPONSE only before a login
  Reader in(body);
  const Value token = in.Bytes();
  if (!in.ok() || !in.AtEnd()) return ProtocolError(stream, "malformed AUTH_RESPONSE body");
  if (login_running_) return ProtocolError(stream, "an AUTH_RESPONSE came before the last one was answered");
  AuthService* auth = backend_.auth();
  CHARYBDIS_ASSERT(auth != nullptr);  // STARTUP asked for a login
  absl::StatusOr<auth::Credentials> credentials = auth::ParsePlainToken(token.bytes.value_or(""));
  if (!credentials.ok()) {
    CHARYBDIS_PROBE(backend_.probes(), "auth.malformed_token");
    Reply(stream, BadCredentials(absl::StrCat("Failed to authenticate: ", credentials.status().message())));
    return true;
  }
  login_running_ = true;
  std::weak_ptr<char> alive = alive_;
  CheckLogin(backend_, peer_, *credentials, [this, alive, stream, role = credentials->role](std::optional<Error> error) {
    if (alive.expired()) return;
    CHARYBDIS_ASSERT(login_running_);
    login_running_ = false;
    if (error) return Reply(stream, ErrorResponse(*error));
    role_ = role;
    authenticated_ = true;
    Writer out;
    out.Bytes(std::nullopt);  // PLAIN has no final token
    Reply(stream, {Opcode::kAuthSuccess, out.Take()});
  });
  return true;
}

void Connection::Authorize(int16_t stream, std::vector<auth::Needed> needed, std::function<void()> then) {
  const AuthService* auth = backend_.auth();
  if (auth == nullptr || !auth->required() || needed.empty()) return then();
  CHARYBDIS_ASSERT(authenticated_ && !role_.empty());
  // Buggify: the cache lapses early, as after a grant to its creator or a
  // connection's quiet spell, so that permissions read afresh mid-load run.
  if (permissions_ && backend_.Now() - permissions_read_at_ < kPermissionsValidity &&
      !backend_.buggify().Fires("auth.permissions_read_early")) {
    return CheckPermissionsAgainst(*permissions_, stream, needed, then);
  }
  std::weak_ptr<char> alive = alive_;
  const Nanos asked_at = backend_.Now();
  const uint64_t generation = permissions_generation_;
  RoleStore(backend_).LoadCaller(role_, [this, alive, stream, needed, then, asked_at, generation](
                                           std::optional<Error> error, RoleRecord role, RoleStore::Granted granted) {
    if (alive.expired()) return;
    if (error) return Reply(stream, ErrorResponse(*error));
    const auth::RolePermissions read(role.is_superuser, std::move(granted));
    // Valid from when it was asked for: what was read may be that old. A
    // read begun before the connection forgot its permissions (its own
    // CREATE or DROP) answers this statement but is not kept.
    if (generation == permissions_generation_) {
      permissions_ = read;
      permissions_read_at_ = asked_at;
    }
    CheckPermissionsAgainst(read, stream, needed, then);
  });
}

void Connection::CheckPermissionsAgainst(const auth::RolePermissions& permissions, int16_t stream,
                                         const std::vector<auth::Needed>& needed, const std::function<void()>& then) {
  for (const auth::Needed& one : needed) {
    if (permissions.Allows(one)) continue;
    CHARYBDIS_PROBE(backend_.probes(), "auth.permission_refused");
    return Reply(stream, ErrorResponse({ErrorCode::kUnauthorized,
                                        absl::StrCat("User ", role_, " has no ", auth::PermissionName(one.permission),
                                                     " permission on ", auth::ResourceText(one.resource),
                                                     " or any of its parents"),
                                        ""}));
  }
  then();
}

namespace {

// A RESULT of kind SCHEMA_CHANGE: the statement changed the schema (an IF
// NOT EXISTS of what exists answers Void).
bool ChangedTheSchema(const Response& response) {
  if (response.opcode != Opcode::kResult) return false;
  Reader in(response.body);
  return in.Int() == kSchemaChangeResultKind && in.ok();
}

}  // namespace

void Connection::RunSchemaChange(int16_t stream, Plan plan, std::function<void(std::function<void()>)> after) {
  auto changed = std::make_shared<bool>(false);
  if (plan.finish) {
    plan.finish = [finish = std::move(plan.finish), changed](const std::vector<ClientResponse>& responses) {
      Response response = finish(responses);
      *changed = ChangedTheSchema(response);
      return response;
    };
  }
  // The answer may come on any thread, after the connection (and the
  // backend) is gone: only the poster is safe to hold there. `after` runs
  // on the connection's thread, where role writes start.
  auto post = backend_.Poster();
  Send send = [post, send = send_, changed, after = std::move(after)](std::string frame) {
    if (!*changed) return send(std::move(frame));
    post([send, after, frame = std::move(frame)]() mutable {
      after([send, frame = std::move(frame)]() mutable { send(std::move(frame)); });
    });
  };
  RunPlan(backend_, send, stream, std::move(plan));
}

void Connection::RunWithGrantsFollowing(int16_t stream, const Prepared& prepared, Plan plan) {
  const AuthService* auth = backend_.auth();
  if (auth == nullptr || !auth->required() || role_.empty()) return Run(stream, std::move(plan));
  const std::optional<std::string> created = CreatedResource(prepared);
  const std::optional<std::string> dropped = DroppedResource(prepared);
  if (!created && !dropped) return Run(stream, std::move(plan));
  Backend& backend = backend_;  // `after` runs only while the backend serves
  std::weak_ptr<char> alive = alive_;
  // The answer goes once the grants are written either way: the schema
  // changed, and what failed a superuser can grant or revoke by hand.
  auto settled = [this, alive](std::function<void()> done) {
    return [this, alive, done](std::optional<Error>) {
      // The permissions this connection holds predate the change.
      if (!alive.expired()) ForgetPermissions();
      done();
    };
  };
  RunSchemaChange(stream, std::move(plan), [&backend, settled, role = role_, created, dropped](
                                               std::function<void()> done) {
    RoleStore(backend).FollowSchemaChange(role, created, dropped, settled(std::move(done)));
  });
}

void Connection::ForgetPermissions() {
  permissions_.reset();
  permissions_generation_++;
}

void Connection::RunRole(int16_t stream, std::shared_ptr<const Prepared> prepared) {
  AuthService* auth = backend_.auth();
  if (auth == nullptr || !auth->required()) {
    return Reply(stream, ErrorResponse({ErrorCode::kInvalid,
                                        "role statements need authentication, and this node's CQL port asks for no "
                                        "password (node config: auth; docs/security.md)",
                                        ""}));
  }
  CHARYBDIS_ASSERT(!role_.empty());  // logged in
  // No `this` below: the answer may come after the connection is gone.
  Backend& backend = backend_;
  Send send = send_;
  auto run = [&backend, send, stream](Plan plan) { RunPlan(backend, send, stream, std::move(plan)); };
  auth->EnsureReady(backend, [&backend, auth, run, role = role_, prepared](absl::Status ready) {
    if (!ready.ok()) return run(ErrorPlan({ErrorCode::kServer, std::string(ready.message()), ""}));
    // The caller's role as it is now: a superuser's status may have been
    // taken away since the login, or the role dropped.
    RoleStore(backend).LoadCaller(role, [&backend, auth, run, prepared](std::optional<Error> error, RoleRecord caller,
                                                                       RoleStore::Granted granted) {
      if (error) return run(ErrorPlan(*error));
      RunRoleStatement(backend, *auth, caller, granted, prepared->keyspace, prepared->parsed.statement, run);
    });
  });
}

}  // namespace charybdis::cql
