// The semantics checkers are oracles: each must accept histories that keep
// the promise and catch the ones that break it.

#include "sim/semantics_checks.h"

#include "sim/scenario_checks.h"
#include "sim/written_values_check.h"
#include "tests/history_builder.h"

#include <gtest/gtest.h>

namespace charybdis::sim {
namespace {

class SemanticsChecksTest : public ::testing::Test, protected testing::HistoryBuilder {
 protected:
  SemanticsChecksTest() {
    ClusterLayout layout;
    for (NodeId id = 1; id <= 3; id++) layout.nodes.push_back({id, "dc1", "r"});
    layout.replication.per_datacenter = {{"dc1", 3}};
    ring_ = std::make_unique<TokenRing>(layout);
  }

  void Read(uint64_t process, ConsistencyLevel level, Timestamp timestamp, const std::string& value) {
    Completed(process, HistoryOp::Type::kOk, HistoryOp::Function::kRead, level, timestamp, value);
  }
  // A write acknowledged by coordinator shard (node 1, shard 0) in `life`.
  void Write(uint64_t process, ConsistencyLevel level, Timestamp timestamp, const std::string& value,
             uint64_t life = 7) {
    HistoryOp& done =
        Completed(process, HistoryOp::Type::kOk, HistoryOp::Function::kWrite, level, timestamp, value);
    done.coordinator_node = 1;
    done.coordinator_life = life;
  }
  void Delete(uint64_t process, ConsistencyLevel level, Timestamp timestamp) {
    Completed(process, HistoryOp::Type::kOk, HistoryOp::Function::kDelete, level, timestamp, "");
  }

  std::unique_ptr<TokenRing> ring_;
};

TEST(VersionOrderTest, FollowsScyllaDbsLastWriteWins) {
  const Version older{5, true, "z"};
  const Version live_a{10, true, "a"};
  const Version live_b{10, true, "b"};
  const Version tombstone{10, false, ""};
  EXPECT_GT(CompareVersions(live_a, older), 0);        // higher timestamp
  EXPECT_GT(CompareVersions(tombstone, live_b), 0);    // a tombstone wins the tie
  EXPECT_GT(CompareVersions(live_b, live_a), 0);       // then the larger value
  EXPECT_GT(CompareVersions(Version{10, true, "\xff"}, Version{10, true, "a"}), 0);  // unsigned
  EXPECT_GT(CompareVersions(Version{10, true, "ab"}, live_a), 0);
  EXPECT_EQ(CompareVersions(live_a, live_a), 0);
  EXPECT_GT(CompareVersions(older, Version{}), 0);     // anything beats nothing
}

TEST_F(SemanticsChecksTest, MonotonicReadsAcceptsReadsThatNeverGoBack) {
  Read(1, CL_QUORUM, 100, "a");  // say, of a write that timed out
  Read(1, CL_ONE, 50, "old");    // ONE does not overlap QUORUM (1 + 2 = RF)
  Read(2, CL_QUORUM, 100, "a");
  Read(3, CL_ALL, 200, "b");
  EXPECT_TRUE(CheckMonotonicReads(*ring_, history_).passed)
      << CheckMonotonicReads(*ring_, history_).detail;
}

TEST_F(SemanticsChecksTest, MonotonicReadsCatchesAQuorumReadGoingBackInTime) {
  Read(1, CL_QUORUM, 100, "a");
  Read(2, CL_QUORUM, 0, "");  // a quorum that never got the repair
  const CheckResult result = CheckMonotonicReads(*ring_, history_);
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.detail.find("returned nothing"), std::string::npos) << result.detail;
}

TEST_F(SemanticsChecksTest, MonotonicReadsIgnoresConcurrentReads) {
  Invoke(1, HistoryOp::Function::kRead, CL_QUORUM);
  Read(2, CL_QUORUM, 0, "");  // began before read 1 ended
  Ok(1, HistoryOp::Function::kRead, CL_QUORUM, 100, "a");
  EXPECT_TRUE(CheckMonotonicReads(*ring_, history_).passed);
}

TEST_F(SemanticsChecksTest, LastWriteWinsAcceptsTiesBrokenTheScyllaWay) {
  Write(1, CL_QUORUM, 100, "a");
  Write(2, CL_QUORUM, 100, "b");
  Read(3, CL_QUORUM, 100, "b");  // the larger value wins the tie
  Delete(1, CL_QUORUM, 100);
  Read(3, CL_QUORUM, 100, "");   // the tombstone wins the tie
  EXPECT_TRUE(CheckLastWriteWins(*ring_, history_).passed)
      << CheckLastWriteWins(*ring_, history_).detail;
}

TEST_F(SemanticsChecksTest, LastWriteWinsCatchesTheSmallerValueWinningATie) {
  Write(1, CL_QUORUM, 100, "b");
  Write(2, CL_QUORUM, 100, "a");
  Read(3, CL_QUORUM, 100, "a");  // same timestamp: read_your_writes would pass this
  const CheckResult result = CheckLastWriteWins(*ring_, history_);
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.detail.find("\"b\"@100"), std::string::npos) << result.detail;
}

TEST_F(SemanticsChecksTest, LastWriteWinsCatchesALiveCellBeatingATombstoneTie) {
  Write(1, CL_QUORUM, 100, "a");
  Delete(2, CL_QUORUM, 100);
  Read(3, CL_QUORUM, 100, "a");
  EXPECT_FALSE(CheckLastWriteWins(*ring_, history_).passed);
}

TEST_F(SemanticsChecksTest, CoordinatorTimestampsAcceptStrictlyIncreasingStamps) {
  Write(1, CL_ONE, 100, "a");
  Write(1, CL_ONE, 101, "b");
  Write(1, CL_ONE, 90, "c", /*life=*/8);  // a new life may start lower
  EXPECT_TRUE(CheckCoordinatorTimestamps(history_).passed)
      << CheckCoordinatorTimestamps(history_).detail;
}

TEST_F(SemanticsChecksTest, CoordinatorTimestampsCatchAStepBack) {
  Write(1, CL_ONE, 100, "a");
  Write(1, CL_ONE, 99, "b");  // the clock stepped back and the stamp followed it
  const CheckResult result = CheckCoordinatorTimestamps(history_);
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.detail.find("stamped 99 after one stamped 100"), std::string::npos)
      << result.detail;
}

TEST_F(SemanticsChecksTest, CoordinatorTimestampsCatchARepeatedStampOfConcurrentWrites) {
  Invoke(1, HistoryOp::Function::kWrite, CL_ONE);
  Write(2, CL_ONE, 100, "b");
  HistoryOp& first = Ok(1, HistoryOp::Function::kWrite, CL_ONE, 100, "a");
  first.coordinator_node = 1;
  first.coordinator_life = 7;
  const CheckResult result = CheckCoordinatorTimestamps(history_);
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.detail.find("stamped twice"), std::string::npos) << result.detail;
}

TEST_F(SemanticsChecksTest, CoordinatorTimestampsLeaveClientTimestampsAlone) {
  Write(1, CL_ONE, 100, "a");
  Invoke(1, HistoryOp::Function::kWrite, CL_ONE);
  HistoryOp& own = Ok(1, HistoryOp::Function::kWrite, CL_ONE, 50, "b");
  own.client_timestamp = true;
  own.coordinator_node = 1;
  own.coordinator_life = 7;
  EXPECT_TRUE(CheckCoordinatorTimestamps(history_).passed);
}

TEST_F(SemanticsChecksTest, FinishAfterHealBoundsEveryOperationBegunAfterTheHeal) {
  Invoke(1, HistoryOp::Function::kWrite, CL_ONE);  // before the heal: not bounded
  Read(2, CL_QUORUM, 0, "");
  Ok(1, HistoryOp::Function::kWrite, CL_ONE, 5, "a");
  // Times are history positions: the heal is at 1, the bound 2.
  const CheckResult quick = CheckFinishAfterHeal(history_, 1, 2, 100);
  EXPECT_TRUE(quick.passed) << quick.detail;
  EXPECT_TRUE(quick.liveness);
  Invoke(3, HistoryOp::Function::kRead, CL_QUORUM);  // never finishes
  const CheckResult stuck = CheckFinishAfterHeal(history_, 1, 2, 100);
  EXPECT_FALSE(stuck.passed);
  EXPECT_TRUE(stuck.liveness);  // a liveness failure, exit 3
  EXPECT_NE(stuck.detail.find("never finished"), std::string::npos) << stuck.detail;
  EXPECT_FALSE(CheckFinishAfterHeal(history_, 1000, 2, 2000).passed);  // nothing to check
}

TEST_F(SemanticsChecksTest, ReadsOfWrittenValuesPass) {
  Write(1, CL_QUORUM, 10, "a");
  Completed(2, HistoryOp::Type::kInfo, HistoryOp::Function::kWrite, CL_QUORUM, 0, "maybe");
  Write(3, CL_SERIAL, 20, "paxos");
  Read(4, CL_QUORUM, 10, "a");
  Read(4, CL_QUORUM, 15, "maybe");  // its timestamp was never learned
  Read(4, CL_QUORUM, 21, "paxos");  // a later ballot finished that round
  Read(4, CL_QUORUM, 0, "");        // nothing: for the other checks
  const CheckResult result = CheckReadsReturnWrittenValues(history_);
  EXPECT_TRUE(result.passed) << result.detail;
}

TEST_F(SemanticsChecksTest, AnInventedValueFails) {
  Write(1, CL_QUORUM, 10, "a");
  Read(2, CL_QUORUM, 10, "b");  // a flipped bit
  const CheckResult result = CheckReadsReturnWrittenValues(history_);
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.detail.find("\"b\", which no write wrote"), std::string::npos) << result.detail;
}

TEST_F(SemanticsChecksTest, AValueUnderAnotherTimestampFails) {
  Write(1, CL_QUORUM, 10, "a");
  Write(2, CL_QUORUM, 12, "b");
  Read(3, CL_QUORUM, 12, "a");  // a's bytes under b's version: a misdirected write
  const CheckResult result = CheckReadsReturnWrittenValues(history_);
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.detail.find("written @10"), std::string::npos) << result.detail;
}

TEST_F(SemanticsChecksTest, TheValueOfAWriteThatFailedFails) {
  Completed(1, HistoryOp::Type::kFail, HistoryOp::Function::kWrite, CL_QUORUM, 0, "never");
  Read(2, CL_QUORUM, 5, "never");
  EXPECT_FALSE(CheckReadsReturnWrittenValues(history_).passed);
}

TEST_F(SemanticsChecksTest, NoValueReadIsNothingToCheck) {
  Write(1, CL_QUORUM, 10, "a");
  Read(2, CL_QUORUM, 0, "");
  const CheckResult result = CheckReadsReturnWrittenValues(history_);
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.detail.find("nothing to check"), std::string::npos);
}

}  // namespace
}  // namespace charybdis::sim
