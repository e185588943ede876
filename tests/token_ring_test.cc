#include "core/cluster/token_ring.h"

#include <gtest/gtest.h>

#include <set>

namespace charybdis {
namespace {

ClusterLayout Layout(const std::vector<std::pair<std::string, std::string>>& placements) {
  ClusterLayout layout;
  NodeId id = 1;
  for (const auto& [datacenter, rack] : placements) layout.nodes.push_back({id++, datacenter, rack});
  layout.vnodes_per_node = 32;
  layout.token_seed = 99;
  return layout;
}

TEST(TokenRingTest, SimpleStrategyTakesDistinctSuccessors) {
  ClusterLayout layout = Layout({{"dc1", "r1"}, {"dc1", "r1"}, {"dc1", "r1"}, {"dc1", "r1"}});
  layout.replication.strategy = ReplicationConfig::Strategy::kSimple;
  layout.replication.replication_factor = 3;
  const TokenRing ring(layout);
  EXPECT_EQ(ring.tokens().size(), 4u * 32);
  for (int i = 0; i < 1000; i++) {
    const Token token = TokenOf("k" + std::to_string(i));
    const auto& replicas = ring.ReplicasOf(token);
    ASSERT_EQ(replicas.size(), 3u);
    EXPECT_EQ(std::set<NodeId>(replicas.begin(), replicas.end()).size(), 3u);
    // The primary owns the range ending at the first vnode token >= token.
    Token owner_token = ring.tokens().front().token;
    NodeId owner = ring.tokens().front().node;
    for (const auto& entry : ring.tokens()) {
      if (entry.token >= token) {
        owner_token = entry.token;
        owner = entry.node;
        break;
      }
    }
    EXPECT_EQ(ring.PrimaryReplicaOf(token), owner) << token << " " << owner_token;
  }
}

TEST(TokenRingTest, NetworkTopologyPutsRfReplicasInEachDatacenterOnDistinctRacks) {
  ClusterLayout layout = Layout({{"dc1", "a"}, {"dc1", "b"}, {"dc1", "c"}, {"dc1", "a"},
                                 {"dc2", "x"}, {"dc2", "y"}, {"dc2", "x"}});
  layout.replication.per_datacenter = {{"dc1", 3}, {"dc2", 2}};
  const TokenRing ring(layout);
  EXPECT_EQ(ring.total_replication_factor(), 5u);
  EXPECT_EQ(ring.ReplicationFactorIn("dc2"), 2u);
  EXPECT_EQ(ring.ReplicationFactorIn("dc3"), 0u);
  for (int i = 0; i < 1000; i++) {
    const auto& replicas = ring.ReplicasOf(TokenOf("key" + std::to_string(i)));
    std::map<std::string, std::set<std::string>> racks;
    std::map<std::string, int> count;
    for (NodeId node : replicas) {
      racks[layout.node(node).datacenter].insert(layout.node(node).rack);
      count[layout.node(node).datacenter]++;
    }
    EXPECT_EQ(count["dc1"], 3);
    EXPECT_EQ(count["dc2"], 2);
    EXPECT_EQ(racks["dc1"].size(), 3u) << "dc1 has 3 racks: one replica on each";
    EXPECT_EQ(racks["dc2"].size(), 2u);
  }
}

TEST(TokenRingTest, MoreReplicasThanRacksRepeatRacks) {
  ClusterLayout layout = Layout({{"dc1", "a"}, {"dc1", "a"}, {"dc1", "b"}});
  layout.replication.per_datacenter = {{"dc1", 3}};
  const TokenRing ring(layout);
  EXPECT_EQ(ring.ReplicasOf(0).size(), 3u);
}

TEST(TokenRingTest, SameSeedSameRingAndOwnershipIsBalanced) {
  ClusterLayout layout = Layout({{"dc1", "r1"}, {"dc1", "r2"}, {"dc1", "r3"}});
  layout.vnodes_per_node = 256;
  layout.replication.per_datacenter = {{"dc1", 1}};
  const TokenRing a(layout), b(layout);
  ASSERT_EQ(a.tokens().size(), b.tokens().size());
  for (size_t i = 0; i < a.tokens().size(); i++) EXPECT_EQ(a.tokens()[i].token, b.tokens()[i].token);
  std::map<NodeId, int> owned;
  for (int i = 0; i < 30'000; i++) owned[a.PrimaryReplicaOf(TokenOf(std::to_string(i)))]++;
  for (const auto& [node, count] : owned) {
    EXPECT_GT(count, 8'500) << node;
    EXPECT_LT(count, 11'500) << node;
  }
}

TEST(TokenRingTest, EffectiveOwnershipSumsToTheReplicationFactor) {
  ClusterLayout layout = Layout({{"dc1", "r1"}, {"dc1", "r2"}, {"dc1", "r3"}, {"dc1", "r1"}});
  layout.replication.per_datacenter = {{"dc1", 3}};
  const std::map<NodeId, double> owns = EffectiveOwnership(TokenRing(layout));
  double total = 0;
  for (const auto& [node, share] : owns) total += share;
  EXPECT_NEAR(total, 3.0, 1e-9);
  // Racks r2 and r3 hold one node each: each is a replica of every range,
  // and nodes 1 and 4 share rack r1's replica of each.
  EXPECT_NEAR(owns.at(2), 1.0, 1e-9);
  EXPECT_NEAR(owns.at(3), 1.0, 1e-9);
  EXPECT_NEAR(owns.at(1) + owns.at(4), 1.0, 1e-9);
  EXPECT_GT(owns.at(1), 0.25);
  EXPECT_GT(owns.at(4), 0.25);
  layout.replication.per_datacenter = {{"dc1", 4}};
  for (const auto& [node, share] : EffectiveOwnership(TokenRing(layout))) EXPECT_NEAR(share, 1.0, 1e-9) << node;
}

}  // namespace
}  // namespace charybdis
