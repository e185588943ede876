#include "node/server/password_hashing.h"

#include <crypt.h>

#include <cstring>

#include "core/env/assert.h"

namespace charybdis::node {

std::string BcryptHasher::HashNow(const std::string& password) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  // No random bytes given: libxcrypt draws them from the system's source.
  if (crypt_gensalt_rn("$2b$", kCost, nullptr, 0, salt, sizeof(salt)) == nullptr) return "";
  crypt_data data;
  std::memset(&data, 0, sizeof(data));
  const char* hashed = crypt_r(password.c_str(), salt, &data);
  // libxcrypt's failure token starts with '*'; no real hash does.
  if (hashed == nullptr || hashed[0] == '*') return "";
  return hashed;
}

bool BcryptHasher::MatchesNow(const std::string& password, const std::string& salted_hash) {
  crypt_data data;
  std::memset(&data, 0, sizeof(data));
  const char* hashed = crypt_r(password.c_str(), salted_hash.c_str(), &data);
  if (hashed == nullptr || hashed[0] == '*') return false;
  const size_t length = std::strlen(hashed);
  if (length != salted_hash.size()) return false;
  // Every byte compared, whatever differs first.
  unsigned char differs = 0;
  for (size_t i = 0; i < length; i++) differs |= static_cast<unsigned char>(hashed[i] ^ salted_hash[i]);
  return differs == 0;
}

BcryptHasher::BcryptHasher(std::function<void(std::function<void()>)> post)
    : post_(std::move(post)), decoy_hash_(HashNow("a decoy: no role has this password")) {
  CHARYBDIS_ASSERT(!decoy_hash_.empty());  // libxcrypt has bcrypt and a random source
  for (int i = 0; i < kWorkers; i++) workers_.emplace_back([this] { Work(); });
}

BcryptHasher::~BcryptHasher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void BcryptHasher::Enqueue(Clock::time_point due, std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.emplace(std::make_pair(due, arrivals_++), std::move(job));
  }
  wake_.notify_one();
}

void BcryptHasher::Work() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    if (queue_.empty()) {
      wake_.wait(lock);
      continue;
    }
    const auto due = queue_.begin()->first.first;
    if (Clock::now() < due) {
      wake_.wait_until(lock, due);
      continue;
    }
    std::function<void()> job = std::move(queue_.begin()->second);
    queue_.erase(queue_.begin());
    lock.unlock();
    job();
    lock.lock();
  }
}

void BcryptHasher::Hash(std::string password, std::function<void(std::string)> done) {
  Enqueue(Clock::now(), [this, password = std::move(password), done = std::move(done)] {
    std::string hashed = HashNow(password);
    post_([done, hashed = std::move(hashed)] { done(hashed); });
  });
}

void BcryptHasher::Verify(std::string password, std::string salted_hash, int64_t delay_ns,
                          std::function<void(bool)> done) {
  Enqueue(Clock::now() + std::chrono::nanoseconds(delay_ns),
          [this, password = std::move(password), salted_hash = std::move(salted_hash), done = std::move(done)] {
            const bool matches = MatchesNow(password, salted_hash);
            post_([done, matches] { done(matches); });
          });
}

}  // namespace charybdis::node
