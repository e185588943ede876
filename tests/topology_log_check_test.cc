// The topology log's checks are oracles: they must accept logs that agree
// and catch logs that fork, lag, or lose an acknowledged entry.

#include "sim/topology_log_check.h"

#include <gtest/gtest.h>

namespace charybdis::sim {
namespace {

TopologyEntryColumns Entry(const std::string& kind, const std::string& node) {
  return {{"kind", kind}, {"node", node}, {"operation", "join"}, {"replaced", "0"}};
}

const TopologyEntryColumns kBegin = Entry("begin", "6");
const TopologyEntryColumns kReadNew = Entry("read_new", "6");
const TopologyEntryColumns kFinish = Entry("finish", "6");
const TopologyEntryColumns kOtherBegin = Entry("begin", "7");

TEST(TopologyLogCheckTest, PrefixesAgree) {
  const CheckResult result = CheckTopologyLogsAgree("t", {{1, {kBegin, kReadNew}}, {2, {kBegin}}, {3, {}}});
  EXPECT_TRUE(result.passed) << result.detail;
  EXPECT_EQ(result.name, "t.topology_logs_agree");
}

TEST(TopologyLogCheckTest, ForkedLogsFail) {
  const CheckResult result = CheckTopologyLogsAgree("t", {{1, {kBegin, kReadNew}}, {2, {kOtherBegin}}});
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.detail.find("node 2's entry 1"), std::string::npos) << result.detail;
}

TEST(TopologyLogCheckTest, NoRunningNodeChecksNothing) {
  const CheckResult result = CheckTopologyLogsAgree("t", {});
  EXPECT_FALSE(result.passed);
  EXPECT_TRUE(result.nothing_checked);
}

TEST(TopologyLogCheckTest, ConvergedLogsHaveOneLength) {
  EXPECT_TRUE(CheckTopologyLogsConverge("t", {{1, {kBegin}}, {2, {kBegin}}}).passed);
  const CheckResult behind = CheckTopologyLogsConverge("t", {{1, {kBegin, kReadNew}}, {2, {kBegin}}});
  EXPECT_FALSE(behind.passed);
  EXPECT_NE(behind.detail.find("node 2 1"), std::string::npos) << behind.detail;
}

TEST(TopologyLogCheckTest, AcknowledgedChangesAreWhereTheyWereAcknowledged) {
  const std::vector<TopologyEntryColumns> log = {kBegin, kReadNew, kFinish};
  // Entry 4 was acknowledged by a node that is down at the end: unseen, not lost.
  const CheckResult kept = CheckAcknowledgedTopologyChanges("t", log, {{1, kBegin}, {3, kFinish}, {4, kOtherBegin}});
  EXPECT_TRUE(kept.passed) << kept.detail;
  EXPECT_NE(kept.detail.find("2 within"), std::string::npos) << kept.detail;

  const CheckResult replaced = CheckAcknowledgedTopologyChanges("t", log, {{1, kOtherBegin}});
  EXPECT_FALSE(replaced.passed);
  EXPECT_NE(replaced.detail.find("entry 1 was acknowledged"), std::string::npos) << replaced.detail;
}

TEST(TopologyLogCheckTest, OneEntryAcknowledgedTwiceDiffersFails) {
  // Beyond the log's end, but two answers disagree on what entry 5 is.
  const CheckResult result = CheckAcknowledgedTopologyChanges("t", {kBegin}, {{5, kBegin}, {5, kOtherBegin}});
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.detail.find("and as"), std::string::npos) << result.detail;
}

TEST(TopologyLogCheckTest, NothingAcknowledgedChecksNothing) {
  const CheckResult result = CheckAcknowledgedTopologyChanges("t", {kBegin}, {});
  EXPECT_FALSE(result.passed);
  EXPECT_TRUE(result.nothing_checked);
}

TEST(TopologyLogCheckTest, AcknowledgedAtEntryZeroFails) {
  EXPECT_FALSE(CheckAcknowledgedTopologyChanges("t", {kBegin}, {{0, kBegin}}).passed);
}

}  // namespace
}  // namespace charybdis::sim
