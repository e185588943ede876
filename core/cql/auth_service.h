#pragma once

// A node's authentication (docs/security.md): whether its CQL port asks
// for a password, the roles' keyspace it makes on first use, the first
// superuser it creates from its config, the password hasher and the
// throttle of failed logins. One per node, touched only on the thread of
// its CQL connections (Backend::Post's).

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/auth/login_throttle.h"
#include "core/auth/password_hasher.h"
#include "core/cql/connection.h"

namespace charybdis::cql {

// What AUTHENTICATE names: the drivers' PlainTextAuthProvider answers it.
constexpr char kPasswordAuthenticator[] = "org.apache.cassandra.auth.PasswordAuthenticator";

struct AuthConfig {
  // The CQL port asks for a role and password (PasswordAuthenticator).
  bool required = false;
  // The first superuser, created once for the cluster (if absent) by any
  // node whose config gives its password (a file: node_config's auth).
  std::string superuser = "admin";
  std::string superuser_password;  // empty: this node creates none
};

class AuthService {
 public:
  AuthService(AuthConfig config, auth::PasswordHasher& hasher) : config_(std::move(config)), hasher_(hasher) {}
  AuthService(const AuthService&) = delete;
  AuthService& operator=(const AuthService&) = delete;

  bool required() const { return config_.required; }
  auth::PasswordHasher& hasher() { return hasher_; }
  auth::LoginThrottle& throttle() { return throttle_; }

  // Runs `then` once system_auth and its table exist and, when this node
  // has the superuser's password, once the superuser does: made through
  // `backend` on first use (each step idempotent: CREATE ... IF NOT EXISTS
  // through the schema log, INSERT ... IF NOT EXISTS through Paxos, so
  // nodes doing it at once agree). A failed setup fails the callers
  // waiting for it, and the next call tries again. `backend` must outlive
  // the setup: the node's (node/), or one per simulated node (sim/).
  void EnsureReady(Backend& backend, std::function<void(absl::Status)> then);

 private:
  void RunSetup(Backend& backend);
  void CreateSuperuser(Backend& backend);
  void Finish(absl::Status status);

  const AuthConfig config_;
  auth::PasswordHasher& hasher_;
  auth::LoginThrottle throttle_;
  bool ready_ = false;
  std::vector<std::function<void(absl::Status)>> waiting_;  // non-empty: a setup runs
};

}  // namespace charybdis::cql
