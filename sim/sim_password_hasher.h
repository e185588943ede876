#pragma once

// The simulator's stand-in for bcrypt (node/server/password_hashing.h):
// what a hash costs in simulated time, and a keyed mix of a seeded salt
// and the password that only the same password matches. Not a secure
// hash: the simulator tests what logins do, not cryptography
// (docs/security.md).

#include <string>

#include "core/auth/password_hasher.h"
#include "core/env/random.h"
#include "sim/simulator.h"

namespace charybdis::sim {

class SimPasswordHasher final : public auth::PasswordHasher {
 public:
  // What bcrypt at cost 10 took on this machine: 60-110 ms a hash.
  static constexpr Nanos kHashTime = 80 * kMillisecond;

  // `host`: the simulator host whose events the answers are (a client's).
  SimPasswordHasher(Simulator& simulator, uint32_t host, Random random);

  void Hash(std::string password, std::function<void(std::string salted_hash)> done) override;
  void Verify(std::string password, std::string salted_hash, int64_t delay_ns,
              std::function<void(bool matches)> done) override;
  const std::string& decoy_hash() const override { return decoy_hash_; }

  // The stand-in hash of `password` under `salt` (16 hex digits).
  static std::string HashWith(const std::string& salt, const std::string& password);

 private:
  void After(Nanos delay, std::function<void()> fn);

  Simulator& simulator_;
  const uint32_t host_;
  Random random_;
  std::string decoy_hash_;
};

}  // namespace charybdis::sim
