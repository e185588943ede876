#pragma once

// Salted slow password hashes, behind an interface: real nodes use
// libxcrypt's bcrypt on worker threads (node/server/password_hashing.h),
// the simulator a stand-in that costs what bcrypt costs in simulated time
// (docs/security.md). The hash is slow on purpose, so it never runs on a
// thread that serves requests.

#include <functional>
#include <string>

namespace charybdis::auth {

class PasswordHasher {
 public:
  virtual ~PasswordHasher() = default;
  // A new salted hash of `password`, in crypt(3)'s text form with its own
  // salt; empty when it could not be made. `done` runs on the thread of the connection that asked
  // (Backend::Post's), never inside the call.
  virtual void Hash(std::string password, std::function<void(std::string salted_hash)> done) = 0;
  // Whether `password` hashes to `salted_hash`, no sooner than `delay_ns`
  // from now (a login slowed down after failures: core/auth/login_throttle.h).
  // A malformed hash matches nothing. Same thread rule as Hash.
  virtual void Verify(std::string password, std::string salted_hash, int64_t delay_ns,
                      std::function<void(bool matches)> done) = 0;
  // A hash no password matches, which costs what a real one costs to
  // check: a login for a role that does not exist checks it, so that it
  // takes the time a wrong password takes.
  virtual const std::string& decoy_hash() const = 0;
};

}  // namespace charybdis::auth
