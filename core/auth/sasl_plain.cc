#include "core/auth/sasl_plain.h"

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"

namespace charybdis::auth {

absl::StatusOr<Credentials> ParsePlainToken(std::string_view token) {
  if (token.size() > kMaxTokenBytes) {
    return absl::InvalidArgumentError(absl::StrCat("the SASL PLAIN token has ", token.size(), " bytes, more than ",
                                                   kMaxTokenBytes));
  }
  // From the end, as ScyllaDB reads it: the password follows the last NUL,
  // the role the one before.
  const size_t second = token.rfind('\0');
  if (second == std::string_view::npos || second == 0) {
    return absl::InvalidArgumentError("the SASL PLAIN token is not authzid NUL role NUL password");
  }
  const size_t first = token.rfind('\0', second - 1);
  if (first == std::string_view::npos) {
    return absl::InvalidArgumentError("the SASL PLAIN token is not authzid NUL role NUL password");
  }
  CHARYBDIS_ASSERT(first < second);
  Credentials credentials{std::string(token.substr(first + 1, second - first - 1)),
                          std::string(token.substr(second + 1))};
  if (credentials.role.empty()) return absl::InvalidArgumentError("Authentication ID must not be null");
  if (credentials.password.empty()) return absl::InvalidArgumentError("Password must not be null");
  if (credentials.role.size() > kMaxRoleNameBytes) {
    return absl::InvalidArgumentError(absl::StrCat("a role name has at most ", kMaxRoleNameBytes, " bytes"));
  }
  // A password longer than kMaxPasswordBytes is the login's to fail, after
  // the same hash as any other: bcrypt would compare its first 72 bytes.
  return credentials;
}

}  // namespace charybdis::auth
