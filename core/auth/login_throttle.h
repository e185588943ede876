#pragma once

// Slows down repeated failed logins from one address, as a node-wide
// table: after kFreeFailures failures, each next login from the address
// waits twice as long as the one before (kFirstDelay, at most kMaxDelay)
// before its password is checked. An address forgets its failures
// kForgetAfter after the last one, or at its next success. One table per
// node, touched only on the thread of its CQL connections.

#include <map>
#include <string>

#include "core/env/time.h"

namespace charybdis::auth {

class LoginThrottle {
 public:
  static constexpr int kFreeFailures = 3;
  static constexpr Nanos kFirstDelay = 100 * kMillisecond;
  static constexpr Nanos kMaxDelay = 5 * kSecond;
  static constexpr Nanos kForgetAfter = 60 * kSecond;
  // Addresses remembered at most; the stalest is forgotten first.
  static constexpr size_t kMaxAddresses = 10000;

  // How long a login from `address` waits before its check.
  Nanos DelayFor(const std::string& address, Nanos now) const;
  void OnFailure(const std::string& address, Nanos now);
  void OnSuccess(const std::string& address);

  size_t addresses() const { return failures_.size(); }

 private:
  struct Failures {
    int count = 0;
    Nanos last = 0;
  };
  std::map<std::string, Failures> failures_;
};

}  // namespace charybdis::auth
