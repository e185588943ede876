#pragma once

// bcrypt through libxcrypt (crypt_r, crypt_gensalt_rn with the system's
// random source), on worker threads of its own, so that no connection
// waits behind a hash (docs/security.md). Cost 10, Cassandra's default:
// about 60-100 ms a hash on this machine, slow on purpose.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/auth/password_hasher.h"

namespace charybdis::node {

class BcryptHasher final : public auth::PasswordHasher {
 public:
  static constexpr int kCost = 10;
  static constexpr int kWorkers = 2;

  // `post` runs a callback on the CQL server's thread.
  explicit BcryptHasher(std::function<void(std::function<void()>)> post);
  // Waits for the hashes running; those queued are dropped, unanswered.
  ~BcryptHasher() override;

  void Hash(std::string password, std::function<void(std::string salted_hash)> done) override;
  void Verify(std::string password, std::string salted_hash, int64_t delay_ns,
              std::function<void(bool matches)> done) override;
  const std::string& decoy_hash() const override { return decoy_hash_; }

  // A salted hash of `password`, or "" when libxcrypt fails (no random
  // source). Blocking: for the workers and ctl.
  static std::string HashNow(const std::string& password);
  // Whether `password` hashes to `salted_hash`, compared in constant time.
  static bool MatchesNow(const std::string& password, const std::string& salted_hash);

 private:
  using Clock = std::chrono::steady_clock;
  void Enqueue(Clock::time_point due, std::function<void()> job);
  void Work();

  const std::function<void(std::function<void()>)> post_;
  const std::string decoy_hash_;
  std::mutex mutex_;
  std::condition_variable wake_;
  // By due time, then arrival: a login slowed down waits without holding
  // a worker.
  std::map<std::pair<Clock::time_point, uint64_t>, std::function<void()>> queue_;
  uint64_t arrivals_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace charybdis::node
