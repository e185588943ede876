// core/auth's pure parts: SASL PLAIN tokens and the login throttle.

#include <gtest/gtest.h>

#include <vector>

#include "core/auth/login_throttle.h"
#include "core/auth/permissions.h"
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

// A quoted name may hold a '/': escaped, it cannot pass for a child of
// another resource ("a/b" is not table b of keyspace a).
TEST(PermissionsTest, NamesWithSlashesStayInsideTheirResource) {
  EXPECT_NE(KeyspaceResource("a/b"), TableResource("a", "b"));
  const RolePermissions on_table_a_b(false, {{TableResource("a", "b"), Permission::kSelect}});
  EXPECT_FALSE(on_table_a_b.Allows({Permission::kSelect, TableResource("a/b", "t")}));
  const RolePermissions on_keyspace(false, {{KeyspaceResource("a/b"), Permission::kSelect}});
  EXPECT_TRUE(on_keyspace.Allows({Permission::kSelect, TableResource("a/b", "t%2F")}));
  EXPECT_FALSE(on_keyspace.Allows({Permission::kSelect, TableResource("a", "t")}));
  EXPECT_EQ(ResourceText(TableResource("a/b", "50%")), "<table a/b.50%>");
  EXPECT_EQ(ResourceText(AllKeyspacesResource()), "<all keyspaces>");
}

TEST(PermissionsTest, AGrantCoversWhatIsUnderItAndSuperusersNeedNone) {
  const RolePermissions role(false, {{KeyspaceResource("ks"), Permission::kModify}});
  EXPECT_TRUE(role.Allows({Permission::kModify, TableResource("ks", "t")}));
  EXPECT_FALSE(role.Allows({Permission::kSelect, TableResource("ks", "t")}));
  EXPECT_FALSE(role.Allows({Permission::kModify, TableResource("ks2", "t")}));
  EXPECT_TRUE(RolePermissions(true, {}).Allows({Permission::kDrop, KeyspaceResource("any")}));
  EXPECT_EQ(ApplicablePermissions(TableResource("ks", "t")).size(), 5u);  // no CREATE on a table
  EXPECT_EQ(PermissionNamed("select"), Permission::kSelect);
  EXPECT_EQ(PermissionNamed("everything"), std::nullopt);
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
