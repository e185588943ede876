// The permission scenario's checker (sim/permission_check.h) on histories
// known to be right and known to be wrong.

#include "sim/permission_check.h"

#include <gtest/gtest.h>

namespace charybdis::sim {
namespace {

constexpr Nanos kValidity = 2 * kSecond;

PermissionChange Change(Nanos invoked, Nanos completed, bool grant, const std::string& resource = "data/ks/t",
                        bool ok = true) {
  return {invoked, completed, "r", resource, auth::Permission::kSelect, grant, ok};
}

GuardedStatement Statement(Nanos invoked, Nanos completed, GuardedStatement::Outcome outcome) {
  return {invoked, completed, "r", {auth::Permission::kSelect, "data/ks/t"}, outcome};
}

const GuardedStatement::Outcome kRan = GuardedStatement::Outcome::kRan;
const GuardedStatement::Outcome kRefused = GuardedStatement::Outcome::kRefused;

// Both outcomes are needed for a verdict; each case adds the one it lacks
// where it cannot be wrong (before any grant, or long after a grant).
CheckResult Check(std::vector<PermissionChange> changes, std::vector<GuardedStatement> statements) {
  return CheckPermissionHistory(changes, statements, kValidity);
}

TEST(PermissionCheckTest, AStatementThatRanWithoutAnyGrantFails) {
  const CheckResult result = Check({}, {Statement(10 * kSecond, 11 * kSecond, kRan), Statement(1, 2, kRefused)});
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.detail.find("held no such permission"), std::string::npos) << result.detail;
}

TEST(PermissionCheckTest, AStatementMayRunWithinTheCacheOfARevokedGrant) {
  const std::vector<PermissionChange> changes = {Change(1 * kSecond, 2 * kSecond, true),
                                                 Change(5 * kSecond, 6 * kSecond, false)};
  // Invoked 1.5 s after the revoke completed: a connection may still trust
  // what it read before.
  EXPECT_TRUE(Check(changes, {Statement(7500 * kMillisecond, 7600 * kMillisecond, kRan), Statement(1, 2, kRefused)}).passed);
  // Invoked 3 s after: it read the revoke.
  EXPECT_FALSE(Check(changes, {Statement(9 * kSecond, 9100 * kMillisecond, kRan), Statement(1, 2, kRefused)}).passed);
  // A grant begun while it ran may have counted.
  std::vector<PermissionChange> regranted = changes;
  regranted.push_back(Change(9050 * kMillisecond, 9500 * kMillisecond, true));
  EXPECT_TRUE(Check(regranted, {Statement(9 * kSecond, 9100 * kMillisecond, kRan), Statement(1, 2, kRefused)}).passed);
}

TEST(PermissionCheckTest, AStatementRefusedWhileItsPermissionWasHeldThroughoutFails) {
  const std::vector<PermissionChange> changes = {Change(1 * kSecond, 2 * kSecond, true)};
  const CheckResult late = Check(changes, {Statement(5 * kSecond, 5100 * kMillisecond, kRefused),
                                           Statement(6 * kSecond, 6100 * kMillisecond, kRan)});
  EXPECT_FALSE(late.passed);
  EXPECT_NE(late.detail.find("was refused"), std::string::npos) << late.detail;
  // Right after the grant, a connection may still trust what it read before.
  EXPECT_TRUE(Check(changes, {Statement(3 * kSecond, 3100 * kMillisecond, kRefused),
                              Statement(6 * kSecond, 6100 * kMillisecond, kRan)}).passed);
  // A revoke begun while it ran may have counted.
  std::vector<PermissionChange> revoked = changes;
  revoked.push_back(Change(5050 * kMillisecond, 5200 * kMillisecond, false));
  EXPECT_TRUE(Check(revoked, {Statement(5 * kSecond, 5100 * kMillisecond, kRefused),
                              Statement(3 * kSecond, 3100 * kMillisecond, kRan)}).passed);
}

TEST(PermissionCheckTest, AGrantOnTheKeyspaceCoversItsTables) {
  const std::vector<PermissionChange> changes = {Change(1 * kSecond, 2 * kSecond, true, "data/ks")};
  EXPECT_FALSE(Check(changes, {Statement(5 * kSecond, 5100 * kMillisecond, kRefused),
                               Statement(6 * kSecond, 6100 * kMillisecond, kRan)}).passed);
  // Another keyspace's grant covers nothing here.
  const std::vector<PermissionChange> other = {Change(1 * kSecond, 2 * kSecond, true, "data/ks2")};
  EXPECT_FALSE(Check(other, {Statement(6 * kSecond, 6100 * kMillisecond, kRan), Statement(1, 2, kRefused)}).passed);
}

// A revoke whose answer was lost cannot make a permission held.
TEST(PermissionCheckTest, ARevokeOfUnknownFateGrantsNothing) {
  const std::vector<PermissionChange> changes = {Change(3 * kSecond, 4 * kSecond, false, "data/ks/t", /*ok=*/false)};
  EXPECT_FALSE(Check(changes, {Statement(9 * kSecond, 9100 * kMillisecond, kRan), Statement(1, 2, kRefused)}).passed);
}

TEST(PermissionCheckTest, AChangeOfUnknownFateMayHaveCountedEitherWay) {
  const std::vector<PermissionChange> changes = {Change(1 * kSecond, 2 * kSecond, true),
                                                 Change(3 * kSecond, 4 * kSecond, false, "data/ks/t", /*ok=*/false)};
  EXPECT_TRUE(Check(changes, {Statement(9 * kSecond, 9100 * kMillisecond, kRan),
                              Statement(10 * kSecond, 10100 * kMillisecond, kRefused)}).passed);
}

TEST(PermissionCheckTest, AHistoryWithoutBothOutcomesChecksNothing) {
  const CheckResult result = Check({}, {Statement(1, 2, kRefused)});
  EXPECT_FALSE(result.passed);
  EXPECT_TRUE(result.nothing_checked);
}

}  // namespace
}  // namespace charybdis::sim
