#include "core/auth/login_throttle.h"

#include <algorithm>

#include "core/env/assert.h"

namespace charybdis::auth {

Nanos LoginThrottle::DelayFor(const std::string& address, Nanos now) const {
  auto it = failures_.find(address);
  if (it == failures_.end() || now - it->second.last >= kForgetAfter) return 0;
  const int over = it->second.count - kFreeFailures;
  if (over < 0) return 0;
  Nanos delay = kFirstDelay;
  for (int i = 0; i < over && delay < kMaxDelay; i++) delay *= 2;
  delay = std::min(delay, kMaxDelay);
  CHARYBDIS_ASSERT(delay >= kFirstDelay && delay <= kMaxDelay);
  return delay;
}

void LoginThrottle::OnFailure(const std::string& address, Nanos now) {
  auto it = failures_.find(address);
  if (it == failures_.end() && failures_.size() >= kMaxAddresses) {
    // Forget the address whose last failure is oldest: a scan, but only
    // when the table is full, which takes ten thousand failing addresses.
    auto stalest = std::min_element(failures_.begin(), failures_.end(),
                                     [](const auto& a, const auto& b) { return a.second.last < b.second.last; });
    failures_.erase(stalest);
  }
  Failures& failures = failures_[address];
  if (now - failures.last >= kForgetAfter) failures.count = 0;
  failures.count++;
  failures.last = now;
  CHARYBDIS_ASSERT(failures_.size() <= kMaxAddresses);
}

void LoginThrottle::OnSuccess(const std::string& address) { failures_.erase(address); }

}  // namespace charybdis::auth
