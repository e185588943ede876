// core/auth's pure parts: SASL PLAIN tokens and the login throttle.

#include <gtest/gtest.h>

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

TEST(LoginThrottleTest, SlowsDownAnAddressAfterItsFreeFailures) {
  LoginThrottle throttle;
  Nanos now = kSecond;
  for (int i = 0; i < LoginThrottle::kFreeFailures; i++) {
    EXPECT_EQ(throttle.DelayFor("a", now), 0);
    throttle.OnFailure("a", now);
  }
  EXPECT_EQ(throttle.DelayFor("a", now), LoginThrottle::kFirstDelay);
  throttle.OnFailure("a", now);
  EXPECT_EQ(throttle.DelayFor("a", now), 2 * LoginThrottle::kFirstDelay);
  for (int i = 0; i < 20; i++) throttle.OnFailure("a", now);
  EXPECT_EQ(throttle.DelayFor("a", now), LoginThrottle::kMaxDelay);
  EXPECT_EQ(throttle.DelayFor("b", now), 0);  // per address
  // Forgotten after a quiet minute, or at a success.
  EXPECT_EQ(throttle.DelayFor("a", now + LoginThrottle::kForgetAfter), 0);
  throttle.OnFailure("a", now + LoginThrottle::kForgetAfter);
  EXPECT_EQ(throttle.DelayFor("a", now + LoginThrottle::kForgetAfter), 0);  // counting starts again
  throttle.OnSuccess("a");
  EXPECT_EQ(throttle.addresses(), 0u);
}

TEST(LoginThrottleTest, ForgetsTheStalestAddressWhenFull) {
  LoginThrottle throttle;
  for (size_t i = 0; i < LoginThrottle::kMaxAddresses; i++) throttle.OnFailure(std::to_string(i), kSecond + i);
  throttle.OnFailure("new", 2 * kSecond + LoginThrottle::kMaxAddresses);
  EXPECT_EQ(throttle.addresses(), LoginThrottle::kMaxAddresses);
  for (int i = 0; i < LoginThrottle::kFreeFailures; i++) throttle.OnFailure("1", 3 * kSecond);
  EXPECT_GT(throttle.DelayFor("1", 3 * kSecond), 0);  // still known: "0" was the stalest
}

}  // namespace
}  // namespace charybdis::auth
