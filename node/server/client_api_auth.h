#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/auth/permissions.h"
#include "core/auth/sasl_plain.h"
#include "core/cql/connection.h"
#include "node/server/client_metadata.h"

namespace charybdis::node {

// What a call needs: these permissions (none: any role that logged in),
// or, when nullopt, a superuser.
using CallNeeds = std::optional<std::vector<auth::Needed>>;

// Who may use the gRPC client API when the node asks for passwords
// (docs/security.md, "The gRPC client API"). Each call carries its role
// and password, as each CQL connection logs in once. The first call of a
// role and password runs the CQL port's login (bcrypt, the decoy hash,
// the throttle of the caller's address); the node then remembers the pair
// for 10 s, by an HMAC under a key of this process (never the password),
// so that a stream of calls costs one hash per 10 s, and calls that come
// while a pair is checked wait for that one check. The role's permissions
// are read at QUORUM and trusted 2 s, as a CQL connection's. Runs on the
// CQL server's thread, through its backend.
class ClientApiAuth {
 public:
  static constexpr Nanos kLoginValidity = 10 * kSecond;

  explicit ClientApiAuth(cql::Backend& backend);
  ClientApiAuth(const ClientApiAuth&) = delete;
  ClientApiAuth& operator=(const ClientApiAuth&) = delete;

  // `done` gets OK when the call may run, else what to answer it:
  // UNAUTHENTICATED (no credentials, or wrong ones), PERMISSION_DENIED
  // (naming what is missing), UNAVAILABLE (the roles could not be read).
  void Check(const std::string& peer, std::optional<auth::Credentials> credentials, CallNeeds needs,
             std::function<void(grpc::Status)> done);
  // After a call's schema change was answered: when it created or dropped
  // a keyspace or table, its grants follow as through CQL
  // (RoleStore::FollowSchemaChange), and every role's permissions are read
  // again. `done` gets whether the grants were written (true when nothing
  // followed; a failure is logged, for a superuser to mend by hand).
  void FollowSchemaChange(const std::string& role, const ClientRequest& request, const ClientResponse& response,
                          std::function<void(bool)> done);

 private:
  struct Waiter {
    CallNeeds needs;
    std::function<void(grpc::Status)> done;
  };
  struct Permissions {
    auth::RolePermissions permissions;
    Nanos read_at = 0;
  };

  // The pair's key: an HMAC of role and password.
  std::string KeyOf(const auth::Credentials& credentials) const;
  void LoggedIn(const std::string& key, const std::string& role, std::optional<cql::Error> error);
  void Authorize(const std::string& role, CallNeeds needs, std::function<void(grpc::Status)> done);
  void PermissionsRead(const std::string& role, std::optional<cql::Error> error, auth::RolePermissions permissions,
                       Nanos asked_at, uint64_t generation);
  static grpc::Status Decide(const std::string& role, const auth::RolePermissions& permissions,
                             const CallNeeds& needs);

  cql::Backend& backend_;
  std::string hmac_key_;  // random, this process's
  std::map<std::string, Nanos> logged_in_;  // by KeyOf: when the login was checked
  std::map<std::string, std::vector<Waiter>> logging_in_;  // by KeyOf: calls waiting for its check
  std::map<std::string, Permissions> permissions_;  // by role
  std::map<std::string, std::vector<Waiter>> reading_permissions_;  // by role
  // Counts schema changes followed: a read asked before one is not kept.
  uint64_t permissions_generation_ = 0;
  std::shared_ptr<char> alive_ = std::make_shared<char>();  // callbacks after this is gone do nothing
};

}  // namespace charybdis::node
