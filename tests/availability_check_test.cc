// The availability check (sim/availability_check.h) on histories made by
// hand: it fails an operation that did not succeed while its coordinator
// and enough replicas were well, and leaves alone those whose replicas
// were not, LWTs, and operations within the recovery after a spell.

#include "sim/availability_check.h"

#include <gtest/gtest.h>

namespace charybdis::sim {
namespace {

constexpr Nanos kRecovery = 1 * kSecond;
constexpr Nanos kEnd = 60 * kSecond;

class AvailabilityCheckTest : public ::testing::Test {
 protected:
  AvailabilityCheckTest() {
    ClusterLayout layout;
    for (NodeId id = 1; id <= 3; id++) {
      layout.nodes.push_back({id, "dc1", "r" + std::to_string(id)});
      topology_.nodes.push_back({id, 0, "r" + std::to_string(id)});
    }
    topology_.datacenters = {"dc1"};
    layout.replication.per_datacenter = {{"dc1", 3}};
    ring_ = std::make_shared<const TokenRing>(layout);
  }

  // One operation of its own process through node 1, from `from` to
  // `to` (s), completed as `outcome`.
  void Add(HistoryOp::Function function, ConsistencyLevel level, Nanos from, Nanos to, HistoryOp::Type outcome) {
    HistoryOp invoke;
    invoke.process = ++processes_;
    invoke.function = function;
    invoke.table = "kv";
    invoke.key = "k" + std::to_string(processes_);
    invoke.consistency = level;
    invoke.time = from;
    invoke.coordinator_node = 1;
    history_.push_back(invoke);
    HistoryOp completion = invoke;
    completion.type = outcome;
    completion.time = to;
    history_.push_back(completion);
  }

  CheckResult Check() const { return CheckAvailableWhenWell(history_, health_, ring_, topology_, kRecovery, kEnd); }

  Topology topology_;
  std::shared_ptr<const TokenRing> ring_;
  HealthLog health_;
  History history_;
  uint64_t processes_ = 0;
};

TEST_F(AvailabilityCheckTest, AFailureWithEveryNodeWellFails) {
  Add(HistoryOp::Function::kWrite, CL_QUORUM, 1 * kSecond, 2 * kSecond, HistoryOp::Type::kOk);
  Add(HistoryOp::Function::kRead, CL_QUORUM, 3 * kSecond, 4 * kSecond, HistoryOp::Type::kFail);
  const CheckResult result = Check();
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.detail.find("1 of 2 operations"), std::string::npos) << result.detail;
  EXPECT_NE(result.detail.find("QUORUM key k2 via node 1 at 3000ms: failed"), std::string::npos) << result.detail;
}

TEST_F(AvailabilityCheckTest, AnUnknownOutcomeOrNoAnswerIsNoSuccess) {
  Add(HistoryOp::Function::kWrite, CL_ONE, 1 * kSecond, 2 * kSecond, HistoryOp::Type::kInfo);
  EXPECT_FALSE(Check().passed);
  HistoryOp never_answered = history_.front();
  never_answered.process = 99;
  history_ = {never_answered};
  EXPECT_NE(Check().detail.find("never finished"), std::string::npos);
}

TEST_F(AvailabilityCheckTest, AQuorumWithTwoReplicasDownOwesNothing) {
  health_.Add(2, 0, 10 * kSecond);
  health_.Add(3, 0, 10 * kSecond);
  Add(HistoryOp::Function::kWrite, CL_QUORUM, 1 * kSecond, 2 * kSecond, HistoryOp::Type::kFail);
  Add(HistoryOp::Function::kWrite, CL_ONE, 3 * kSecond, 4 * kSecond, HistoryOp::Type::kOk);
  const CheckResult result = Check();
  EXPECT_TRUE(result.passed) << result.detail;
  EXPECT_NE(result.detail.find("1 of 1 operations"), std::string::npos) << result.detail;
}

TEST_F(AvailabilityCheckTest, AnOperationWithinTheRecoveryOwesNothingAndOneAfterItDoes) {
  health_.Add(2, 0, 5 * kSecond);
  health_.Add(3, 0, 5 * kSecond);
  Add(HistoryOp::Function::kWrite, CL_ALL, 5 * kSecond + 500 * kMillisecond, 6 * kSecond, HistoryOp::Type::kFail);
  EXPECT_TRUE(Check().nothing_checked);
  Add(HistoryOp::Function::kWrite, CL_ALL, 7 * kSecond, 8 * kSecond, HistoryOp::Type::kFail);
  EXPECT_FALSE(Check().passed);
}

TEST_F(AvailabilityCheckTest, ACoordinatorDownOwesNothingAndLwtsAreLeftOut) {
  health_.Add(1, 0, 10 * kSecond);
  Add(HistoryOp::Function::kRead, CL_ONE, 1 * kSecond, 2 * kSecond, HistoryOp::Type::kFail);
  Add(HistoryOp::Function::kCas, CL_QUORUM, 20 * kSecond, 21 * kSecond, HistoryOp::Type::kFail);
  EXPECT_TRUE(Check().nothing_checked);
}

}  // namespace
}  // namespace charybdis::sim
