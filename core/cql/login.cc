#include "core/cql/login.h"

#include "absl/strings/str_cat.h"
#include "core/cql/auth_service.h"
#include "core/cql/role_store.h"
#include "core/env/assert.h"

namespace charybdis::cql {
namespace {

Error BadCredentials(std::string message) { return Error{ErrorCode::kBadCredentials, std::move(message), ""}; }

void CheckPassword(Backend& backend, const std::string& peer, const auth::Credentials& credentials,
                   const std::optional<RoleRecord>& role, std::function<void(std::optional<Error>)> done) {
  AuthService& auth = *backend.auth();
  const std::string& password = credentials.password;
  // A role that does not exist, cannot log in or has no password is
  // checked against the decoy hash: every wrong login costs one hash, so
  // its time does not tell whether the role exists.
  const bool usable = role && role->can_login && !role->salted_hash.empty() &&
                      password.size() <= auth::kMaxPasswordBytes && password.find('\0') == std::string::npos;
  const std::string hash = usable ? role->salted_hash : auth.hasher().decoy_hash();
  const Nanos delay = auth.throttle().Begin(peer, backend.Now());
  if (delay > 0) CHARYBDIS_PROBE(backend.probes(), "auth.login_slowed");
  auth.hasher().Verify(password, hash, delay, [&auth, &backend, peer, usable, role_name = credentials.role,
                                               done = std::move(done)](bool matches) {
    if (usable && matches) {
      auth.throttle().OnSuccess(peer);
      return done(std::nullopt);
    }
    auth.throttle().OnFailure(peer, backend.Now());
    CHARYBDIS_PROBE(backend.probes(), "auth.login_failed");
    done(BadCredentials(absl::StrCat("Provided username ", role_name, " and/or password are incorrect")));
  });
}

}  // namespace

void CheckLogin(Backend& backend, const std::string& peer, const auth::Credentials& credentials,
                std::function<void(std::optional<Error>)> done) {
  AuthService* auth = backend.auth();
  CHARYBDIS_ASSERT(auth != nullptr && auth->required());
  auth->EnsureReady(backend, [&backend, peer, credentials, done = std::move(done)](absl::Status ready) mutable {
    if (!ready.ok()) return done(BadCredentials(absl::StrCat("Unable to perform authentication: ", ready.message())));
    RoleStore(backend).Get(credentials.role, [&backend, peer, credentials, done = std::move(done)](
                                                 std::optional<Error> error, std::optional<RoleRecord> role) mutable {
      if (error) return done(BadCredentials(absl::StrCat("Unable to perform authentication: ", error->message)));
      CheckPassword(backend, peer, credentials, role, std::move(done));
    });
  });
}

}  // namespace charybdis::cql
