#include "node/server/client_api_auth.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "absl/strings/str_cat.h"
#include "core/cql/login.h"
#include "core/cql/permission_checks.h"
#include "core/cql/role_store.h"
#include "core/env/assert.h"
#include "node/server/log.h"

namespace charybdis::node {

namespace {

// Remembered logins beyond this many are pruned of the expired ones.
constexpr size_t kPruneAbove = 1024;

grpc::Status StatusOf(const cql::Error& error) {
  if (error.code == cql::ErrorCode::kBadCredentials) return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, error.message);
  if (error.code == cql::ErrorCode::kUnauthorized) return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, error.message);
  return grpc::Status(grpc::StatusCode::UNAVAILABLE, error.message);
}

}  // namespace

ClientApiAuth::ClientApiAuth(cql::Backend& backend) : backend_(backend), hmac_key_(32, '\0') {
  CHARYBDIS_ASSERT(RAND_bytes(reinterpret_cast<unsigned char*>(hmac_key_.data()), static_cast<int>(hmac_key_.size())) ==
                   1);
}

std::string ClientApiAuth::KeyOf(const auth::Credentials& credentials) const {
  // The role's length first: no other pair makes the same message.
  const std::string message = absl::StrCat(credentials.role.size(), ":", credentials.role, credentials.password);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  CHARYBDIS_ASSERT(HMAC(EVP_sha256(), hmac_key_.data(), static_cast<int>(hmac_key_.size()),
                        reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest,
                        &length) != nullptr);
  return std::string(reinterpret_cast<const char*>(digest), length);
}

void ClientApiAuth::Check(const std::string& peer, std::optional<auth::Credentials> credentials, CallNeeds needs,
                          std::function<void(grpc::Status)> done) {
  if (!credentials) {
    return done(grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                             "this node asks for a role and password: send them as the call's metadata role-bin "
                             "and password-bin (charybdis-ctl --user and --password-file; docs/security.md)"));
  }
  const std::string key = KeyOf(*credentials);
  auto known = logged_in_.find(key);
  if (known != logged_in_.end() && backend_.Now() - known->second < kLoginValidity) {
    return Authorize(credentials->role, std::move(needs), std::move(done));
  }
  std::vector<Waiter>& waiting = logging_in_[key];
  waiting.push_back({std::move(needs), std::move(done)});
  if (waiting.size() > 1) return;  // the first call's login answers them all
  std::weak_ptr<char> alive = alive_;
  cql::CheckLogin(backend_, peer, *credentials, [this, alive, key, role = credentials->role](
                                                    std::optional<cql::Error> error) {
    if (alive.expired()) return;
    LoggedIn(key, role, std::move(error));
  });
}

void ClientApiAuth::LoggedIn(const std::string& key, const std::string& role, std::optional<cql::Error> error) {
  std::vector<Waiter> waiting = std::move(logging_in_.at(key));
  logging_in_.erase(key);
  if (!error) {
    const Nanos now = backend_.Now();
    if (logged_in_.size() > kPruneAbove) {
      std::erase_if(logged_in_, [now](const auto& entry) { return now - entry.second >= kLoginValidity; });
    }
    logged_in_[key] = now;
  }
  for (Waiter& waiter : waiting) {
    if (error) {
      waiter.done(StatusOf(*error));
    } else {
      Authorize(role, std::move(waiter.needs), std::move(waiter.done));
    }
  }
}

void ClientApiAuth::Authorize(const std::string& role, CallNeeds needs, std::function<void(grpc::Status)> done) {
  auto cached = permissions_.find(role);
  if (cached != permissions_.end() && backend_.Now() - cached->second.read_at < cql::Connection::kPermissionsValidity) {
    return done(Decide(role, cached->second.permissions, needs));
  }
  std::vector<Waiter>& waiting = reading_permissions_[role];
  waiting.push_back({std::move(needs), std::move(done)});
  if (waiting.size() > 1) return;
  std::weak_ptr<char> alive = alive_;
  const Nanos asked_at = backend_.Now();
  const uint64_t generation = permissions_generation_;
  // Also whether the role still exists and may log in: a dropped role's
  // remembered login stops working here.
  cql::RoleStore(backend_).LoadCaller(role, [this, alive, role, asked_at, generation](std::optional<cql::Error> error,
                                                                         cql::RoleRecord record,
                                                                         cql::RoleStore::Granted granted) {
    if (alive.expired()) return;
    PermissionsRead(role, std::move(error), auth::RolePermissions(record.is_superuser, std::move(granted)), asked_at,
                    generation);
  });
}

void ClientApiAuth::PermissionsRead(const std::string& role, std::optional<cql::Error> error,
                                    auth::RolePermissions permissions, Nanos asked_at, uint64_t generation) {
  std::vector<Waiter> waiting = std::move(reading_permissions_.at(role));
  reading_permissions_.erase(role);
  if (generation != permissions_generation_) {
    // A schema change's grants came while this read was out, and a call
    // that joined it may be one its creator made after the answer: read
    // again for all of them.
    for (Waiter& waiter : waiting) Authorize(role, std::move(waiter.needs), std::move(waiter.done));
    return;
  }
  // Valid from when they were asked for: what was read may be that old.
  if (!error) permissions_[role] = Permissions{permissions, asked_at};
  for (Waiter& waiter : waiting) waiter.done(error ? StatusOf(*error) : Decide(role, permissions, waiter.needs));
}

void ClientApiAuth::FollowSchemaChange(const std::string& role, const ClientRequest& request,
                                       const ClientResponse& response, std::function<void(bool)> done) {
  CHARYBDIS_ASSERT(request.has_schema_change());
  // Refused, failed, or an IF [NOT] EXISTS with nothing to do (answered
  // without a sequence): nothing changed, so nothing follows.
  if (response.code() != ClientResponse::OK || response.schema_sequence() == 0) return done(true);
  const std::optional<cql::Prepared> prepared = cql::PreparedOf(request.schema_change());
  CHARYBDIS_ASSERT(prepared.has_value());  // the schema agent parsed it
  const std::optional<std::string> created = cql::CreatedResource(*prepared);
  const std::optional<std::string> dropped = cql::DroppedResource(*prepared);
  if (!created && !dropped) return done(true);
  std::weak_ptr<char> alive = alive_;
  cql::RoleStore(backend_).FollowSchemaChange(
      role, created, dropped,
      [this, alive, role, statement = request.schema_change().statement(), done = std::move(done)](
          std::optional<cql::Error> error) {
        if (error) {
          Log("warning", "schema_change_grants_failed",
              {{"role", role}, {"statement", statement}, {"why", error->message}, {"mend", "GRANT or REVOKE by hand"}});
        }
        if (!alive.expired()) {
          // Every role's, not only the creator's: a DROP revokes others'
          // grants, and roles that hold the creator's role hold its new ones.
          permissions_.clear();
          permissions_generation_++;
        }
        done(!error);
      });
}

grpc::Status ClientApiAuth::Decide(const std::string& role, const auth::RolePermissions& permissions,
                                   const CallNeeds& needs) {
  if (!needs) {
    if (permissions.superuser()) return grpc::Status::OK;
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat("User ", role, " is no superuser: only superusers change the topology, "
                                     "clean up, repair, compact or cut a node's links"));
  }
  for (const auth::Needed& one : *needs) {
    if (permissions.Allows(one)) continue;
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat("User ", role, " has no ", auth::PermissionName(one.permission), " permission on ",
                                     auth::ResourceText(one.resource), " or any of its parents"));
  }
  return grpc::Status::OK;
}

}  // namespace charybdis::node
