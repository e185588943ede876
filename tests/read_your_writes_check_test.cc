// The checker is an oracle: it must accept correct histories and catch
// lost acknowledged writes.

#include "sim/read_your_writes_check.h"

#include <gtest/gtest.h>

#include "tests/history_builder.h"

namespace charybdis::sim {
namespace {

class ReadYourWritesCheckTest : public ::testing::Test, protected testing::HistoryBuilder {
 protected:
  ReadYourWritesCheckTest() {
    ClusterLayout layout;
    for (NodeId id = 1; id <= 6; id++) layout.nodes.push_back({id, id <= 3 ? "dc1" : "dc2", "r"});
    layout.replication.per_datacenter = {{"dc1", 3}, {"dc2", 3}};
    ring_ = std::make_unique<TokenRing>(layout);
  }

  void Op(uint64_t process, HistoryOp::Type type, HistoryOp::Function function, ConsistencyLevel level,
          Timestamp timestamp) {
    Add(process, type, function, level, timestamp);
  }
  void Write(uint64_t process, ConsistencyLevel level, Timestamp timestamp, const std::string& dc = "dc1") {
    Completed(process, HistoryOp::Type::kOk, HistoryOp::Function::kWrite, level, timestamp, "", dc);
  }
  void Read(uint64_t process, ConsistencyLevel level, Timestamp seen, const std::string& dc = "dc1") {
    Completed(process, HistoryOp::Type::kOk, HistoryOp::Function::kRead, level, seen, "", dc);
  }

  std::unique_ptr<TokenRing> ring_;
};

TEST_F(ReadYourWritesCheckTest, OverlappingLevels) {
  EXPECT_TRUE(LevelsOverlap(*ring_, CL_QUORUM, "dc1", CL_QUORUM, "dc2"));
  EXPECT_FALSE(LevelsOverlap(*ring_, CL_ONE, "dc1", CL_QUORUM, "dc1"));
  EXPECT_TRUE(LevelsOverlap(*ring_, CL_ALL, "dc1", CL_ONE, "dc1"));
  EXPECT_TRUE(LevelsOverlap(*ring_, CL_LOCAL_QUORUM, "dc1", CL_LOCAL_QUORUM, "dc1"));
  EXPECT_FALSE(LevelsOverlap(*ring_, CL_LOCAL_QUORUM, "dc1", CL_LOCAL_QUORUM, "dc2"));
  EXPECT_TRUE(LevelsOverlap(*ring_, CL_EACH_QUORUM, "dc1", CL_LOCAL_QUORUM, "dc2"));
  EXPECT_FALSE(LevelsOverlap(*ring_, CL_ANY, "dc1", CL_ALL, "dc1"));
}

TEST_F(ReadYourWritesCheckTest, AcceptsReadsThatSeeTheWriteOrNewer) {
  Write(1, CL_QUORUM, 100);
  Read(2, CL_QUORUM, 100);
  Write(1, CL_QUORUM, 200);
  Read(2, CL_QUORUM, 250);  // a newer write (say, unacknowledged) is fine
  Read(3, CL_ONE, 50);      // ONE after QUORUM need not overlap
  const CheckResult result = CheckReadYourWrites(*ring_, history_);
  EXPECT_TRUE(result.passed) << result.detail;
}

TEST_F(ReadYourWritesCheckTest, CatchesALostAcknowledgedWrite) {
  Write(1, CL_QUORUM, 100);
  Write(1, CL_QUORUM, 200);
  Read(2, CL_QUORUM, 100);
  const CheckResult result = CheckReadYourWrites(*ring_, history_);
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.detail.find("with timestamp 200"), std::string::npos) << result.detail;
}

TEST_F(ReadYourWritesCheckTest, ConcurrentWritesDoNotCount) {
  // The read starts before the write is acknowledged: either answer is fine.
  Op(1, HistoryOp::Type::kInvoke, HistoryOp::Function::kWrite, CL_ALL, 0);
  Op(2, HistoryOp::Type::kInvoke, HistoryOp::Function::kRead, CL_ALL, 0);
  Op(1, HistoryOp::Type::kOk, HistoryOp::Function::kWrite, CL_ALL, 300);
  Op(2, HistoryOp::Type::kOk, HistoryOp::Function::kRead, CL_ALL, 0);
  EXPECT_TRUE(CheckReadYourWrites(*ring_, history_).passed);
}

TEST_F(ReadYourWritesCheckTest, WritesAreOrderedByCompletionNotInvocation) {
  // W1 is invoked first but acknowledged only after the read began; W2 is
  // invoked and acknowledged before the read. The read owes W2, not W1.
  Op(1, HistoryOp::Type::kInvoke, HistoryOp::Function::kWrite, CL_QUORUM, 0);
  Op(2, HistoryOp::Type::kInvoke, HistoryOp::Function::kWrite, CL_QUORUM, 0);
  Op(2, HistoryOp::Type::kOk, HistoryOp::Function::kWrite, CL_QUORUM, 100);
  Op(3, HistoryOp::Type::kInvoke, HistoryOp::Function::kRead, CL_QUORUM, 0);
  Op(1, HistoryOp::Type::kOk, HistoryOp::Function::kWrite, CL_QUORUM, 900);
  Op(3, HistoryOp::Type::kOk, HistoryOp::Function::kRead, CL_QUORUM, 100);
  const CheckResult result = CheckReadYourWrites(*ring_, history_);
  EXPECT_TRUE(result.passed) << result.detail;
  Read(4, CL_QUORUM, 100);  // after both: owes W1's 900
  EXPECT_FALSE(CheckReadYourWrites(*ring_, history_).passed);
}

TEST_F(ReadYourWritesCheckTest, AcknowledgedLwtsBindQuorumReads) {
  Write(1, CL_SERIAL, 500);
  Read(2, CL_QUORUM, 400);
  EXPECT_FALSE(CheckReadYourWrites(*ring_, history_).passed);
  EXPECT_TRUE(LevelsOverlap(*ring_, CL_LOCAL_SERIAL, "dc1", CL_LOCAL_QUORUM, "dc1"));
  EXPECT_FALSE(LevelsOverlap(*ring_, CL_SERIAL, "dc1", CL_ONE, "dc1"));
}

TEST_F(ReadYourWritesCheckTest, LocalLevelsOnlyCountInTheirDatacenter) {
  Write(1, CL_LOCAL_QUORUM, 100, "dc1");
  Read(2, CL_LOCAL_QUORUM, 0, "dc2");  // other datacenter: no guarantee
  EXPECT_TRUE(CheckReadYourWrites(*ring_, history_).passed);
  Read(3, CL_LOCAL_QUORUM, 0, "dc1");
  EXPECT_FALSE(CheckReadYourWrites(*ring_, history_).passed);
}

TEST_F(ReadYourWritesCheckTest, DeletesAreWritesToo) {
  Op(1, HistoryOp::Type::kInvoke, HistoryOp::Function::kDelete, CL_ALL, 0);
  Op(1, HistoryOp::Type::kOk, HistoryOp::Function::kDelete, CL_ALL, 500);
  Read(2, CL_ONE, 400);
  EXPECT_FALSE(CheckReadYourWrites(*ring_, history_).passed);
}

}  // namespace
}  // namespace charybdis::sim
