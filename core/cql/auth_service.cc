#include "core/cql/auth_service.h"

#include "absl/strings/str_cat.h"
#include "core/cql/role_store.h"
#include "core/env/assert.h"

namespace charybdis::cql {
namespace {

// system_auth's tables, each with the statement that makes it.
const std::vector<std::pair<const char*, const char*>>& AuthTables() {
  static const std::vector<std::pair<const char*, const char*>> tables = {
      {kRolesTable, kCreateRolesTableStatement},
      {kRolePermissionsTable, kCreateRolePermissionsTableStatement},
      {kRoleMembersTable, kCreateRoleMembersTableStatement}};
  return tables;
}

// Runs one schema statement through shard 0's schema agent; `done` on the
// connection thread.
void ChangeSchema(Backend& backend, const std::string& statement, std::function<void(absl::Status)> done) {
  ClientRequest request;
  request.mutable_schema_change()->set_statement(statement);
  backend.Execute(std::move(request), [post = backend.Poster(), statement, done](ClientResponse response) {
    post([statement, done, response = std::move(response)] {
      if (response.code() == ClientResponse::OK) return done(absl::OkStatus());
      done(absl::UnavailableError(absl::StrCat("'", statement, "' failed: ", response.message())));
    });
  });
}

}  // namespace

void AuthService::EnsureReady(Backend& backend, std::function<void(absl::Status)> then) {
  CHARYBDIS_ASSERT(config_.required);  // only a node that asks for passwords makes system_auth
  if (ready_) return then(absl::OkStatus());
  waiting_.push_back(std::move(then));
  if (waiting_.size() == 1) RunSetup(backend);
}

void AuthService::RunSetup(Backend& backend) {
  CHARYBDIS_ASSERT(!waiting_.empty());
  const auto schema = backend.CurrentSchema();
  if (schema->FindKeyspace(kAuthKeyspace) == nullptr) {
    return ChangeSchema(backend, CreateAuthKeyspaceStatement(backend.Cluster()), [this, &backend](absl::Status status) {
      if (!status.ok()) return Finish(status);
      // The keyspace is in the schema now (the change was answered after
      // this node applied it); the next step sees it.
      if (backend.CurrentSchema()->FindKeyspace(kAuthKeyspace) == nullptr) {
        return Finish(absl::UnavailableError("system_auth was created but this node does not see it yet"));
      }
      RunSetup(backend);
    });
  }
  for (const auto& [table, statement] : AuthTables()) {
    if (schema->FindTable(kAuthKeyspace, table) != nullptr) continue;
    return ChangeSchema(backend, statement, [this, &backend, table = table](absl::Status status) {
      if (!status.ok()) return Finish(status);
      if (backend.CurrentSchema()->FindTable(kAuthKeyspace, table) == nullptr) {
        return Finish(absl::UnavailableError(absl::StrCat("system_auth.", table, " was created but this node does not see it yet")));
      }
      RunSetup(backend);
    });
  }
  if (config_.superuser_password.empty()) return Finish(absl::OkStatus());
  CreateSuperuser(backend);
}

void AuthService::CreateSuperuser(Backend& backend) {
  hasher_.Hash(config_.superuser_password, [this, &backend](std::string salted_hash) {
    if (salted_hash.empty()) return Finish(absl::InternalError("the superuser's password could not be hashed"));
    RoleRecord superuser{config_.superuser, /*can_login=*/true, /*is_superuser=*/true, std::move(salted_hash)};
    RoleStore(backend).Create(superuser, [this](std::optional<Error> error, bool) {
      // Not applied: the role exists already (another node made it, or an
      // earlier start of this one); its password is ALTER ROLE's now.
      if (error) return Finish(absl::UnavailableError(absl::StrCat("creating the superuser failed: ", error->message)));
      Finish(absl::OkStatus());
    });
  });
}

void AuthService::Finish(absl::Status status) {
  CHARYBDIS_ASSERT(!waiting_.empty());
  ready_ = status.ok();
  std::vector<std::function<void(absl::Status)>> waiting;
  waiting.swap(waiting_);
  for (auto& then : waiting) then(status);
}

}  // namespace charybdis::cql
