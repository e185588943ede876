// Scripted cluster stories for the failure detector, run in the simulator.

#include "core/cluster/failure_detector.h"

#include <gtest/gtest.h>

#include "sim/cluster.h"
#include "tests/scenario_text.h"

namespace charybdis::sim {
namespace {

using testing::BaseScenario;
using testing::MustParse;

class FailureDetectorTest : public ::testing::Test {
 protected:
  FailureDetectorTest()
      : scenario_(MustParse(BaseScenario())),
        buggify_(false, Random(1)),
        cluster_(simulator_, scenario_, Random(1), buggify_) {
    cluster_.StartAll();
  }

  void RunUntil(Nanos time) { simulator_.RunUntil(time); }
  std::vector<NodeId> ViewOf(NodeId id) {
    return cluster_.node(id).failure_detector()->LiveNodes();
  }

  Simulator simulator_;
  LoadedScenario scenario_;
  SimBuggify buggify_;
  Cluster cluster_;
};

TEST_F(FailureDetectorTest, AllNodesSeeEachOtherAfterStart) {
  RunUntil(300 * kMillisecond);
  for (NodeId id = 1; id <= 3; id++) {
    EXPECT_EQ(ViewOf(id), (std::vector<NodeId>{1, 2, 3}));
    EXPECT_EQ(cluster_.node(id).failure_detector()->generation(), 1u);
  }
}

TEST_F(FailureDetectorTest, CrashedNodeIsConvictedAndComesBackWithANewGeneration) {
  RunUntil(1 * kSecond);
  cluster_.Crash(2);
  EXPECT_EQ(cluster_.node(2).failure_detector(), nullptr);
  RunUntil(1 * kSecond + 300 * kMillisecond);
  EXPECT_TRUE(cluster_.node(1).failure_detector()->IsUp(2)) << "convicted too early";
  RunUntil(1 * kSecond + 700 * kMillisecond);
  EXPECT_EQ(ViewOf(1), (std::vector<NodeId>{1, 3}));
  EXPECT_EQ(ViewOf(3), (std::vector<NodeId>{1, 3}));

  cluster_.Restart(2);
  RunUntil(2 * kSecond + 500 * kMillisecond);
  EXPECT_EQ(cluster_.node(2).failure_detector()->generation(), 2u);
  for (NodeId id = 1; id <= 3; id++) EXPECT_EQ(ViewOf(id), (std::vector<NodeId>{1, 2, 3}));
}

// What a topology barrier lets go (core/topology/operation_driver.h): a
// peer convicted, or one unheard for the conviction time since the
// detector began watching it; never one it has not had time to hear.
TEST_F(FailureDetectorTest, APeerIsHeldDownOnceConvictedOrLongUnheard) {
  RunUntil(1 * kSecond);
  cluster_.Crash(3);
  RunUntil(1 * kSecond + 300 * kMillisecond);
  EXPECT_FALSE(cluster_.node(1).failure_detector()->HeldDown(3)) << "not convicted yet";
  RunUntil(2 * kSecond);
  EXPECT_TRUE(cluster_.node(1).failure_detector()->HeldDown(3));
  EXPECT_FALSE(cluster_.node(1).failure_detector()->HeldDown(2));
  EXPECT_FALSE(cluster_.node(1).failure_detector()->HeldDown(1));
  // Just restarted, node 1 has heard nobody: node 3 is unheard, not down.
  cluster_.Crash(1);
  cluster_.Restart(1);
  RunUntil(2 * kSecond + 100 * kMillisecond);
  EXPECT_FALSE(cluster_.node(1).failure_detector()->HeldDown(3));
  RunUntil(3 * kSecond + 500 * kMillisecond);
  EXPECT_TRUE(cluster_.node(1).failure_detector()->HeldDown(3));
  EXPECT_FALSE(cluster_.node(1).failure_detector()->HeldDown(2));
}

TEST_F(FailureDetectorTest, PartitionSplitsViewsAndHealingJoinsThem) {
  RunUntil(1 * kSecond);
  cluster_.Partition({1}, {2, 3}, /*one_way=*/false);
  RunUntil(2 * kSecond);
  EXPECT_EQ(ViewOf(1), (std::vector<NodeId>{1}));
  EXPECT_EQ(ViewOf(2), (std::vector<NodeId>{2, 3}));
  cluster_.Heal();
  RunUntil(2 * kSecond + 300 * kMillisecond);
  for (NodeId id = 1; id <= 3; id++) EXPECT_EQ(ViewOf(id), (std::vector<NodeId>{1, 2, 3}));
}

TEST_F(FailureDetectorTest, OneWayPartitionOnlyBlindsTheReceivingSide) {
  RunUntil(1 * kSecond);
  cluster_.Partition({3}, {1}, /*one_way=*/true);  // 3 -> 1 dropped
  RunUntil(2 * kSecond);
  EXPECT_FALSE(cluster_.node(1).failure_detector()->IsUp(3));
  EXPECT_TRUE(cluster_.node(3).failure_detector()->IsUp(1));
}

TEST_F(FailureDetectorTest, PausedNodeIsConvictedThenRecovers) {
  RunUntil(1 * kSecond);
  cluster_.Pause(1, 2 * kSecond);
  RunUntil(2 * kSecond);
  EXPECT_FALSE(cluster_.node(2).failure_detector()->IsUp(1));
  RunUntil(3 * kSecond + 300 * kMillisecond);
  EXPECT_TRUE(cluster_.node(2).failure_detector()->IsUp(1));
  // Node 1 sees a burst of stale heartbeats on resume, then fresh ones.
  EXPECT_EQ(ViewOf(1), (std::vector<NodeId>{1, 2, 3}));
}

TEST_F(FailureDetectorTest, NodeWhoseDiskFailsCannotStartUntilItRecovers) {
  RunUntil(1 * kSecond);
  cluster_.Crash(2);
  cluster_.FailDisk(2, DiskFaults{true, true, 0}, 2 * kSecond);
  cluster_.Restart(2);
  RunUntil(2 * kSecond);
  EXPECT_EQ(cluster_.node(2).failure_detector()->generation(), 0u);
  EXPECT_FALSE(cluster_.node(1).failure_detector()->IsUp(2));
  RunUntil(4 * kSecond);
  EXPECT_EQ(cluster_.node(2).failure_detector()->generation(), 2u);
  EXPECT_TRUE(cluster_.node(1).failure_detector()->IsUp(2));
}

TEST_F(FailureDetectorTest, GenerationBumpLostWithUnsyncedDataIsNeverReused) {
  // Crash right after start, before the synced bump can complete.
  cluster_.Crash(3);
  cluster_.Restart(3);
  RunUntil(1 * kSecond);
  const uint64_t generation = cluster_.node(3).failure_detector()->generation();
  EXPECT_GE(generation, 1u);
  cluster_.Crash(3);
  cluster_.Restart(3);
  RunUntil(2 * kSecond);
  EXPECT_GT(cluster_.node(3).failure_detector()->generation(), generation);
}

}  // namespace
}  // namespace charybdis::sim
