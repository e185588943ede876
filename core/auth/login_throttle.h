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

  // A login from `address` begins: how long it waits before its check.
  // Logins still being checked count as failures already, so that many
  // connections at once from one address wait as one after another would.
  // Each Begin is followed by one OnFailure or OnSuccess.
  Nanos Begin(const std::string& address, Nanos now);
  void OnFailure(const std::string& address, Nanos now);
  void OnSuccess(const std::string& address);

  size_t addresses() const { return failures_.size(); }

 private:
  struct Failures {
    int count = 0;
    int checking = 0;  // begun, not yet failed or succeeded
    Nanos last = 0;
  };
  Nanos DelayAfter(int failures) const;
  std::map<std::string, Failures> failures_;
};

}  // namespace charybdis::auth
