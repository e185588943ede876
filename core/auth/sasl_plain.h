#pragma once

// SASL PLAIN (RFC 4616), the token of Cassandra's PasswordAuthenticator:
// `authzid \0 authcid \0 password`. The drivers send an empty authzid.

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace charybdis::auth {

// Bounds that keep a hostile token cheap to refuse. bcrypt reads at most
// 72 bytes of a password (docs/security.md): a longer one is refused
// where it is set, never silently cut.
constexpr size_t kMaxTokenBytes = 4096;
constexpr size_t kMaxRoleNameBytes = 256;
constexpr size_t kMaxPasswordBytes = 72;

struct Credentials {
  std::string role;
  std::string password;
};

// The role and password of a PLAIN token; InvalidArgument saying what is
// wrong with a malformed one (no separators, an empty role or password,
// a NUL inside a field, too long). The authzid is ignored, as ScyllaDB
// and Cassandra do.
absl::StatusOr<Credentials> ParsePlainToken(std::string_view token);

}  // namespace charybdis::auth
