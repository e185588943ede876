// The data path during a topology change (docs/topology.md), on a
// simulated 4-node cluster (RF 3) whose node 4 has begun to decommission:
// writes go to the pending replica too and wait for block_for + pending
// answers, Paxos quorums are natural/2 + 1 + pending, and reads move to
// the new owners only when the operation says so.

#include <gtest/gtest.h>

#include "sim/scenario_checks.h"
#include "tests/four_node_test.h"
#include "tests/requests.h"

namespace charybdis::sim {
namespace {

using topology::Entry;

using PendingReplicasTest = FourNodeTest;

TEST_F(PendingReplicasTest, AWriteDuringAMoveReachesThePendingReplica) {
  Step(Entry::Kind::kBegin);
  const Moving moving = KeyThatMoves();
  ASSERT_NE(std::find(moving.natural.begin(), moving.natural.end(), NodeId{4}), moving.natural.end());
  ASSERT_EQ(Call(::charybdis::testing::PutRequest("t", "a", moving.key, "v", CL_ONE), moving.key).code(),
            ClientResponse::OK);
  RunFor(500 * kMillisecond);
  Step(Entry::Kind::kReadNew);
  // Reads now go to the owners after the move. With the other two down, a
  // read at ONE that node 4 (no owner after) coordinates can only be
  // answered by the pending replica, which holds the write only if the
  // coordinator sent it there.
  SetStayingOwnersDown(moving, true);
  const ClientResponse read = Call(::charybdis::testing::GetRequest("t", moving.key, CL_ONE), moving.key, 4);
  ASSERT_EQ(read.code(), ClientResponse::OK) << read.message();
  ASSERT_EQ(read.rows_size(), 1) << "the pending replica did not get the write";
  EXPECT_EQ(::charybdis::testing::FirstValue(read), "v");
}

// Nothing streams in these tests, so what was written before the move is
// on the owners now only: a read shows which ring it went to.
TEST_F(PendingReplicasTest, ReadsMoveToTheOwnersAfterOnlyWithTheirStage) {
  const Moving moving = [this] {
    Step(Entry::Kind::kBegin);
    return KeyThatMoves();
  }();
  Step(Entry::Kind::kRollBack);
  ASSERT_EQ(Call(::charybdis::testing::PutRequest("t", "a", moving.key, "old", CL_ALL), moving.key).code(),
            ClientResponse::OK);
  Step(Entry::Kind::kBegin);
  // Node 4 coordinates, the pending replica is up, the two other owners are down.
  SetStayingOwnersDown(moving, true);
  const ClientResponse before = Call(::charybdis::testing::GetRequest("t", moving.key, CL_ONE), moving.key, 4);
  ASSERT_EQ(before.code(), ClientResponse::OK) << before.message();
  EXPECT_EQ(before.rows_size(), 1) << "read old: node 4 answers";
  SetStayingOwnersDown(moving, false);
  Step(Entry::Kind::kReadNew);
  SetStayingOwnersDown(moving, true);
  const ClientResponse after = Call(::charybdis::testing::GetRequest("t", moving.key, CL_ONE), moving.key, 4);
  ASSERT_EQ(after.code(), ClientResponse::OK) << after.message();
  EXPECT_EQ(after.rows_size(), 0) << "read new: only the pending replica may answer, and nothing streamed to it";
}

TEST_F(PendingReplicasTest, AWriteWaitsForBlockForPlusPending) {
  Step(Entry::Kind::kBegin);
  const Moving moving = KeyThatMoves();
  cluster_.Crash(moving.pending);
  RunFor(1500 * kMillisecond);
  const NodeId coordinator = moving.natural.front();
  // ALL: the three natural replicas and the pending one.
  const ClientResponse all = Call(::charybdis::testing::PutRequest("t", "a", moving.key, "v", CL_ALL), moving.key, coordinator);
  EXPECT_EQ(all.code(), ClientResponse::UNAVAILABLE);
  EXPECT_EQ(all.alive(), 3u);
  EXPECT_EQ(all.blocked_for(), 4u);
  // QUORUM: 2 + 1 of 4, and three are up.
  const ClientResponse quorum =
      Call(::charybdis::testing::PutRequest("t", "a", moving.key, "v", CL_QUORUM), moving.key, coordinator);
  EXPECT_EQ(quorum.code(), ClientResponse::OK) << quorum.message();
}

TEST_F(PendingReplicasTest, PaxosDuringAMoveNeedsAQuorumOfTheOwnersBeforeAndAfter) {
  Step(Entry::Kind::kBegin);
  const Moving moving = KeyThatMoves();
  NodeId natural_down = 0;  // a natural replica other than node 4
  for (NodeId node : moving.natural) {
    if (node != 4 && natural_down == 0) natural_down = node;
  }
  cluster_.Crash(moving.pending);
  cluster_.Crash(natural_down);
  RunFor(1500 * kMillisecond);
  // Two of the three owners now are up, a quorum of them; but only one of
  // the owners after is (node 4 leaves), so natural/2 + 1 + pending = 3.
  const ClientResponse refused = Call(
      ::charybdis::testing::IfNotExistsRequest("t", "a", moving.key, "v"), moving.key, 4);
  EXPECT_EQ(refused.code(), ClientResponse::UNAVAILABLE) << refused.message();
  EXPECT_EQ(refused.alive(), 2u);
  EXPECT_EQ(refused.blocked_for(), 3u);
  cluster_.Restart(moving.pending);
  RunFor(1500 * kMillisecond);
  const ClientResponse written = Call(
      ::charybdis::testing::IfNotExistsRequest("t", "a", moving.key, "v"), moving.key, 4);
  EXPECT_EQ(written.code(), ClientResponse::OK) << written.message();
}

// Hints for a node that left are dropped and counted, not held for the
// hint window (docs/topology.md "Hints for a node that leaves").
TEST_F(PendingReplicasTest, HintsForANodeThatLeftAreDropped) {
  Step(Entry::Kind::kBegin);
  const Moving moving = KeyThatMoves();
  cluster_.Crash(4);
  RunFor(1500 * kMillisecond);  // convicted
  NodeId coordinator = 0;
  for (NodeId node : moving.natural) {
    if (node != 4 && coordinator == 0) coordinator = node;
  }
  ASSERT_EQ(Call(::charybdis::testing::PutRequest("t", "a", moving.key, "v", CL_QUORUM), moving.key, coordinator).code(),
            ClientResponse::OK);
  RunFor(500 * kMillisecond);
  ASSERT_EQ(MetricTotals(cluster_)["hints_written"], 1u);
  EXPECT_EQ(MetricTotals(cluster_)["hints_dropped"], 0u) << "held while node 4 may come back";
  Step(Entry::Kind::kReadNew);
  Step(Entry::Kind::kFinish);
  RunFor(3000 * kMillisecond);  // a few replay ticks
  EXPECT_EQ(MetricTotals(cluster_)["hints_dropped"], 1u);
  // A later write for a key node 4 owned leaves no hint: it goes to the new owners.
  ASSERT_EQ(Call(::charybdis::testing::PutRequest("t", "a", moving.key, "w", CL_QUORUM), moving.key, coordinator).code(),
            ClientResponse::OK);
  RunFor(500 * kMillisecond);
  EXPECT_EQ(MetricTotals(cluster_)["hints_written"], 1u);
}

}  // namespace
}  // namespace charybdis::sim
