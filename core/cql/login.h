#pragma once

// A login as the CQL port's (docs/security.md, "The login"), for either
// client API: system_auth made on first use, then the role read at QUORUM
// and the password checked against its salted hash, or against the decoy
// hash when the role does not exist, may not log in or has no password
// (every failed login costs one hash); logins from an address that failed
// repeatedly are slowed down.

#include <functional>
#include <optional>
#include <string>

#include "core/auth/sasl_plain.h"
#include "core/cql/connection.h"

namespace charybdis::cql {

// `done`: nothing when the role logged in, else the error to answer (Bad
// credentials, 0x0100). `backend`, whose auth() must not be null, must
// outlive the login: `done` may come after the asker is gone.
void CheckLogin(Backend& backend, const std::string& peer, const auth::Credentials& credentials,
                std::function<void(std::optional<Error>)> done);

}  // namespace charybdis::cql
