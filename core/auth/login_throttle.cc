#include "core/auth/login_throttle.h"

#include <algorithm>

#include "core/env/assert.h"

namespace charybdis::auth {

Nanos LoginThrottle::DelayAfter(int failures) const {
  const int over = failures - kFreeFailures;
  if (over < 0) return 0;
  Nanos delay = kFirstDelay;
  for (int i = 0; i < over && delay < kMaxDelay; i++) delay *= 2;
  delay = std::min(delay, kMaxDelay);
  CHARYBDIS_ASSERT(delay >= kFirstDelay && delay <= kMaxDelay);
  return delay;
}

Nanos LoginThrottle::Begin(const std::string& address, Nanos now) {
  auto it = failures_.find(address);
  if (it == failures_.end() && failures_.size() >= kMaxAddresses) {
    // Forget the address whose last failure is oldest and that has no
    // login being checked: a scan, but only when the table is full.
    auto stalest = failures_.end();
    for (auto at = failures_.begin(); at != failures_.end(); ++at) {
      if (at->second.checking == 0 && (stalest == failures_.end() || at->second.last < stalest->second.last)) stalest = at;
    }
    if (stalest != failures_.end()) failures_.erase(stalest);
  }
  Failures& failures = failures_[address];
  if (failures.checking == 0 && now - failures.last >= kForgetAfter) failures.count = 0;
  const Nanos delay = DelayAfter(failures.count + failures.checking);
  failures.checking++;
  return delay;
}

void LoginThrottle::OnFailure(const std::string& address, Nanos now) {
  Failures& failures = failures_[address];
  CHARYBDIS_ASSERT(failures.checking > 0);  // Begin came first
  failures.checking--;
  failures.count++;
  failures.last = now;
}

void LoginThrottle::OnSuccess(const std::string& address) {
  auto it = failures_.find(address);
  CHARYBDIS_ASSERT(it != failures_.end() && it->second.checking > 0);  // Begin came first
  // Its failures are forgiven; logins still being checked stay counted.
  it->second.count = 0;
  if (--it->second.checking == 0) failures_.erase(it);
}

}  // namespace charybdis::auth
