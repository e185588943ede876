// core/auth's pure parts: SASL PLAIN tokens and the login throttle.

#include <gtest/gtest.h>

#include <vector>

#include "core/auth/login_throttle.h"
#include "core/auth/sasl_plain.h"

namespace charybdis::auth {
namespace {

std::string Nul() { return std::string(1, '\0'); }

TEST(SaslPlainTest, ReadsRoleAndPasswordAndIgnoresTheAuthzid) {
  absl::StatusOr<Credentials> plain = ParsePlainToken(Nul() + "alice" + Nul() + "pw");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->role, "alice");
  EXPECT_EQ(plain->password, "pw");
  plain = ParsePlainToken("someone" + Nul() + "bob" + Nul() + "p" + std::string("w"));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->role, "bob");
}

TEST(SaslPlainTest, RefusesMalformedTokensSayingWhy) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "not authzid NUL role NUL password"},
      {"alice", "not authzid NUL role NUL password"},
      {Nul() + "alice", "not authzid NUL role NUL password"},
      {Nul() + Nul() + "pw", "Authentication ID must not be null"},
      {Nul() + "alice" + Nul(), "Password must not be null"},
      {Nul() + std::string(kMaxRoleNameBytes + 1, 'r') + Nul() + "pw", "at most 256 bytes"},
      {std::string(kMaxTokenBytes + 1, 'x'), "more than 4096"},
  };
  for (const auto& [token, why] : cases) {
    absl::StatusOr<Credentials> plain = ParsePlainToken(token);
    ASSERT_FALSE(plain.ok()) << token.size();
    EXPECT_NE(plain.status().message().find(why), std::string::npos) << plain.status();
  }
}

// One failed login: Begin, then OnFailure; returns the wait it got.
Nanos Fail(LoginThrottle& throttle, const std::string& address, Nanos now) {
  const Nanos delay = throttle.Begin(address, now);
  throttle.OnFailure(address, now);
  return delay;
}

TEST(LoginThrottleTest, SlowsDownAnAddressAfterItsFreeFailures) {
  LoginThrottle throttle;
  Nanos now = kSecond;
  for (int i = 0; i < LoginThrottle::kFreeFailures; i++) EXPECT_EQ(Fail(throttle, "a", now), 0);
  EXPECT_EQ(Fail(throttle, "a", now), LoginThrottle::kFirstDelay);
  EXPECT_EQ(Fail(throttle, "a", now), 2 * LoginThrottle::kFirstDelay);
  for (int i = 0; i < 20; i++) Fail(throttle, "a", now);
  EXPECT_EQ(Fail(throttle, "a", now), LoginThrottle::kMaxDelay);
  EXPECT_EQ(Fail(throttle, "b", now), 0);  // per address
  // Forgotten after a quiet minute: counting starts again.
  EXPECT_EQ(Fail(throttle, "a", now + LoginThrottle::kForgetAfter), 0);
  // A success forgives the address's failures.
  EXPECT_EQ(throttle.Begin("b", now), 0);
  throttle.OnSuccess("b");
  throttle.Begin("a", now + LoginThrottle::kForgetAfter);
  throttle.OnSuccess("a");
  EXPECT_EQ(throttle.addresses(), 0u);
}

// Logins from one address at once count as failures while they are
// checked: the fifth of five concurrent ones waits as the fifth in a row.
TEST(LoginThrottleTest, ConcurrentLoginsFromOneAddressWaitAsIfOneAfterAnother) {
  LoginThrottle throttle;
  std::vector<Nanos> delays;
  for (int i = 0; i < LoginThrottle::kFreeFailures + 2; i++) delays.push_back(throttle.Begin("a", kSecond));
  EXPECT_EQ(delays.back(), 2 * LoginThrottle::kFirstDelay);
  for (size_t i = 0; i < delays.size(); i++) throttle.OnFailure("a", kSecond);
  EXPECT_EQ(Fail(throttle, "a", kSecond), 4 * LoginThrottle::kFirstDelay);
}

TEST(LoginThrottleTest, ForgetsTheStalestAddressWhenFull) {
  LoginThrottle throttle;
  for (size_t i = 0; i < LoginThrottle::kMaxAddresses; i++) Fail(throttle, std::to_string(i), kSecond + i);
  Fail(throttle, "new", 2 * kSecond + LoginThrottle::kMaxAddresses);
  EXPECT_EQ(throttle.addresses(), LoginThrottle::kMaxAddresses);
  for (int i = 0; i < LoginThrottle::kFreeFailures - 1; i++) Fail(throttle, "1", 3 * kSecond);
  EXPECT_GT(Fail(throttle, "1", 3 * kSecond), 0);  // still known: "0" was the stalest
}

}  // namespace
}  // namespace charybdis::auth
