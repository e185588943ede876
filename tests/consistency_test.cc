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
  const TokenRing ring(TwoDatacenters());
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
  const TokenRing ring(TwoDatacenters());
  const Requirement local(CL_LOCAL_QUORUM, ring, "dc1");
  EXPECT_TRUE(local.Counts(2));
  EXPECT_FALSE(local.Counts(5));
  EXPECT_FALSE(local.SatisfiedBy({1, 4, 5, 6}));
  EXPECT_TRUE(local.SatisfiedBy({1, 3}));
  EXPECT_EQ(local.Counted({1, 4, 5}), 1u);
}

TEST(ConsistencyTest, EachQuorumNeedsAQuorumInEveryDatacenter) {
  const TokenRing ring(TwoDatacenters());
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
  const TokenRing ring(layout);
  const Requirement local(CL_LOCAL_QUORUM, ring, "dc1");
  EXPECT_EQ(local.blocked_for(), 2u);
  EXPECT_TRUE(local.Counts(5));
}

}  // namespace
}  // namespace charybdis
