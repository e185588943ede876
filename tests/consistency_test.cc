#include "core/request/consistency.h"

#include <gtest/gtest.h>

namespace charybdis {
namespace {

ClusterLayout TwoDatacenters() {
  ClusterLayout layout;
  for (NodeId id = 1; id <= 6; id++) {
    layout.nodes.push_back({id, id <= 3 ? "dc1" : "dc2", "r" + std::to_string(id)});
  }
  layout.replication.per_datacenter = {{"dc1", 3}, {"dc2", 3}};
  return layout;
}

TEST(ConsistencyTest, BlockedForFollowsTheTable) {
  const auto ring = std::make_shared<const TokenRing>(TwoDatacenters());
  auto blocked = [&](ConsistencyLevel level) { return Requirement(level, ring, "dc1").blocked_for(); };
  EXPECT_EQ(blocked(CL_ANY), 1u);
  EXPECT_EQ(blocked(CL_ONE), 1u);
  EXPECT_EQ(blocked(CL_TWO), 2u);
  EXPECT_EQ(blocked(CL_THREE), 3u);
  EXPECT_EQ(blocked(CL_QUORUM), 4u);  // 6 / 2 + 1
  EXPECT_EQ(blocked(CL_ALL), 6u);
  EXPECT_EQ(blocked(CL_LOCAL_ONE), 1u);
  EXPECT_EQ(blocked(CL_LOCAL_QUORUM), 2u);
  EXPECT_EQ(blocked(CL_EACH_QUORUM), 4u);
}

TEST(ConsistencyTest, LocalLevelsCountOnlyTheLocalDatacenter) {
  const auto ring = std::make_shared<const TokenRing>(TwoDatacenters());
  const Requirement local(CL_LOCAL_QUORUM, ring, "dc1");
  EXPECT_TRUE(local.Counts(2));
  EXPECT_FALSE(local.Counts(5));
  EXPECT_FALSE(local.SatisfiedBy({1, 4, 5, 6}));
  EXPECT_TRUE(local.SatisfiedBy({1, 3}));
  EXPECT_EQ(local.Counted({1, 4, 5}), 1u);
}

TEST(ConsistencyTest, EachQuorumNeedsAQuorumInEveryDatacenter) {
  const auto ring = std::make_shared<const TokenRing>(TwoDatacenters());
  const Requirement each(CL_EACH_QUORUM, ring, "dc1");
  EXPECT_FALSE(each.SatisfiedBy({1, 2, 3, 4}));  // 4 answers, but one from dc2
  EXPECT_TRUE(each.SatisfiedBy({1, 2, 4, 5}));
  const Requirement quorum(CL_QUORUM, ring, "dc1");
  EXPECT_TRUE(quorum.SatisfiedBy({1, 2, 3, 4}));
  EXPECT_FALSE(quorum.SatisfiedBy({1, 2, 3}));
}

TEST(ConsistencyTest, AnUnsetSerialLevelIsSerialAndASetOneIsKept) {
  EXPECT_EQ(SerialOrDefault(CL_UNSET), CL_SERIAL);
  EXPECT_EQ(SerialOrDefault(CL_SERIAL), CL_SERIAL);
  // LOCAL_SERIAL must stay local: as SERIAL it would need a remote
  // datacenter's replicas, and fail while that datacenter is down.
  EXPECT_EQ(SerialOrDefault(CL_LOCAL_SERIAL), CL_LOCAL_SERIAL);
}

TEST(ConsistencyTest, LevelsValidForEachOperation) {
  EXPECT_TRUE(ValidForWrite(CL_ANY).ok());
  EXPECT_TRUE(ValidForWrite(CL_EACH_QUORUM).ok());
  EXPECT_FALSE(ValidForWrite(CL_SERIAL).ok());
  EXPECT_FALSE(ValidForWrite(CL_UNSET).ok());
  EXPECT_FALSE(ValidForRead(CL_ANY).ok());
  EXPECT_NE(ValidForRead(CL_ANY).message().find("ANY is for writes only"), std::string::npos);
  EXPECT_FALSE(ValidForRead(CL_EACH_QUORUM).ok());
  EXPECT_TRUE(ValidForRead(CL_LOCAL_ONE).ok());
}

TEST(ConsistencyTest, SimpleStrategyTreatsLocalLevelsAsClusterWide) {
  ClusterLayout layout = TwoDatacenters();
  layout.replication.strategy = ReplicationConfig::Strategy::kSimple;
  layout.replication.per_datacenter.clear();
  layout.replication.replication_factor = 3;
  const auto ring = std::make_shared<const TokenRing>(layout);
  const Requirement local(CL_LOCAL_QUORUM, ring, "dc1");
  EXPECT_EQ(local.blocked_for(), 2u);
  EXPECT_TRUE(local.Counts(5));
  // EACH_QUORUM is a QUORUM of all the replicas: the strategy knows no
  // datacenters.
  const Requirement each(CL_EACH_QUORUM, ring, "dc1");
  EXPECT_EQ(each.blocked_for(), 2u);
  EXPECT_TRUE(each.SatisfiedBy({1, 5}));
}

// Cassandra's block_for + pending: node 7 (dc1) and node 8 (dc2) are
// pending replicas of a range that nodes 1-6 own now.
TEST(ConsistencyTest, PendingReplicasRaiseWhatAWriteWaitsFor) {
  ClusterLayout after_layout = TwoDatacenters();
  after_layout.nodes.push_back({7, "dc1", "r7"});
  after_layout.nodes.push_back({8, "dc2", "r8"});
  const auto now = std::make_shared<const TokenRing>(TwoDatacenters());
  const auto after = std::make_shared<const TokenRing>(after_layout);
  auto with_pending = [&](ConsistencyLevel level, std::vector<NodeId> pending) {
    Requirement requirement(level, now, "dc1");
    requirement.AddPending(pending, after);
    return requirement;
  };
  EXPECT_EQ(with_pending(CL_QUORUM, {7}).blocked_for(), 5u);
  EXPECT_EQ(with_pending(CL_ONE, {7}).blocked_for(), 2u);
  EXPECT_EQ(with_pending(CL_ALL, {7, 8}).blocked_for(), 8u);
  EXPECT_EQ(with_pending(CL_ANY, {7}).blocked_for(), 1u);  // a hint still serves
  // A local level counts a pending replica of its own datacenter only.
  EXPECT_EQ(with_pending(CL_LOCAL_QUORUM, {7}).blocked_for(), 3u);
  EXPECT_EQ(with_pending(CL_LOCAL_QUORUM, {8}).blocked_for(), 2u);
  EXPECT_TRUE(with_pending(CL_LOCAL_QUORUM, {7}).Counts(7));
  EXPECT_FALSE(with_pending(CL_LOCAL_QUORUM, {8}).Counts(8));
  EXPECT_FALSE(with_pending(CL_LOCAL_QUORUM, {7}).SatisfiedBy({1, 2}));
  EXPECT_TRUE(with_pending(CL_LOCAL_QUORUM, {7}).SatisfiedBy({1, 2, 7}));
  // EACH_QUORUM: the pending replica's datacenter needs one answer more.
  const Requirement each = with_pending(CL_EACH_QUORUM, {8});
  EXPECT_EQ(each.blocked_for(), 5u);
  EXPECT_FALSE(each.SatisfiedBy({1, 2, 4, 5}));
  EXPECT_TRUE(each.SatisfiedBy({1, 2, 4, 5, 8}));
}

}  // namespace
}  // namespace charybdis
