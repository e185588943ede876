// A new node joins a running cluster (core/topology/join_starter.h): on a
// simulated cluster of three (RF 3) with a fourth node that starts empty,
// node 4 reads the logs from its peers, asks to join, drives its join, and
// ends a normal member holding the ranges it gained; until it has heard
// its peers it waits.

#include <gtest/gtest.h>

#include "core/topology/placement.h"
#include "tests/four_node_test.h"
#include "tests/requests.h"
#include "tests/scenario_text.h"

namespace charybdis::sim {
namespace {

using topology::NodeState;

class JoinTest : public FourNodeTest {
 protected:
  explicit JoinTest(bool beside_node_1 = false, const std::string& extra = "")
      : FourNodeTest(Scenario{ThreeNodesAndANewOne(beside_node_1, extra)}) {}
};

TEST_F(JoinTest, ANewNodeJoinsAndHoldsTheRangesItGained) {
  // Written at ALL before node 4 starts: on the three members only.
  std::vector<std::string> keys;
  for (int i = 0; i < 20; i++) {
    keys.push_back("k" + std::to_string(i));
    ASSERT_EQ(Call(::charybdis::testing::PutRequest("t", "a", keys.back(), "v", CL_ALL), keys.back(), 1).code(),
              ClientResponse::OK);
  }
  const uint64_t version = cluster_.node(1).TopologyLog().topology().version();
  cluster_.StartNewNode(4);
  ASSERT_TRUE(RunUntil([this] { return Node4Normal(); }, 30 * kSecond)) << "node 4 did not join";
  // Begin, read new, finish.
  EXPECT_EQ(cluster_.node(1).TopologyLog().topology().version(), version + 3);
  EXPECT_EQ(cluster_.node(4).JoinWaitingFor(), "");
  RunFor(1 * kSecond);
  EXPECT_TRUE(cluster_.node(1).failure_detector()->IsUp(4)) << "the members do not heartbeat the new one";

  // A key node 4 now replicates: with the other owners down, node 4
  // answers a read at ONE alone, which it can only if it streamed the key.
  const topology::Placement placement(cluster_.node(1).TopologyLog().topology(), cluster_.ring()->layout().replication, 2);
  std::string moved;
  std::vector<NodeId> others;
  for (const std::string& key : keys) {
    const std::vector<NodeId>& replicas = placement.ReadReplicasOf(TokenOf(key));
    if (std::find(replicas.begin(), replicas.end(), NodeId{4}) == replicas.end()) continue;
    moved = key;
    for (NodeId node : replicas) {
      if (node != 4) others.push_back(node);
    }
    break;
  }
  ASSERT_FALSE(moved.empty()) << "node 4 gained none of 20 keys";
  for (NodeId node : others) cluster_.Crash(node);
  RunFor(1500 * kMillisecond);
  const ClientResponse read = Call(::charybdis::testing::GetRequest("t", moved, CL_ONE), moved, 4);
  ASSERT_EQ(read.code(), ClientResponse::OK) << read.message();
  ASSERT_EQ(read.rows_size(), 1) << "node 4 did not stream " << moved;
  EXPECT_EQ(::charybdis::testing::FirstValue(read), "v");
}

TEST_F(JoinTest, ANewNodeWaitsUntilItHearsItsPeers) {
  cluster_.Partition({4}, {1, 2, 3}, /*one_way=*/false);
  cluster_.StartNewNode(4);
  RunFor(3 * kSecond);
  EXPECT_EQ(Node4SeenBy(1), nullptr);
  EXPECT_EQ(cluster_.node(4).JoinWaitingFor(), "the schema log of its peers");
  cluster_.Heal();
  ASSERT_TRUE(RunUntil([this] { return Node4Normal(); }, 30 * kSecond)) << "node 4 did not join once healed";
}

TEST_F(JoinTest, ARestartedNewNodeGoesOnWithItsJoin) {
  cluster_.StartNewNode(4);
  ASSERT_TRUE(RunUntil([this] { return Node4SeenBy(1) != nullptr; }, 10 * kSecond)) << "node 4 never asked";
  cluster_.Crash(4);
  RunFor(2 * kSecond);
  EXPECT_EQ(Node4SeenBy(1)->state, NodeState::kJoining) << "the join went on without its driver";
  cluster_.Restart(4);
  ASSERT_TRUE(RunUntil([this] { return Node4Normal(); }, 30 * kSecond)) << "node 4 did not resume its join";
}

class JoinBesideNode1Test : public JoinTest {
 protected:
  JoinBesideNode1Test() : JoinTest(/*beside_node_1=*/true) {}
};

// Node 2 is down for the whole join (node 4 takes ranges from node 1 only,
// so nothing waits for node 2), and restarts with the bootstrap topology
// it kept. A key node 4 took over from node 1 is written by an LWT while
// node 2 is down, then node 3 goes down too. A serial read sent to node 2
// the moment it holds node 1 alive again must see the write: by the
// topology it loaded, nodes 1 and 2 are a quorum of the key's owners, and
// neither holds it. That moment is the stale window: the heartbeat that
// told node 2 node 1 is up also told it node 1's log is longer, and the
// copy it asks for is a round trip away.
TEST_F(JoinBesideNode1Test, ARestartedNodeServesOnlyOnceItsTopologyIsCurrent) {
  cluster_.Crash(2);
  RunFor(1 * kSecond);
  cluster_.StartNewNode(4);
  ASSERT_TRUE(RunUntil([this] { return Node4Normal(); }, 30 * kSecond)) << "node 4 did not join";
  const topology::Placement placement(cluster_.node(1).TopologyLog().topology(), cluster_.ring()->layout().replication, 2);
  std::string key;
  for (int i = 0; key.empty(); i++) {
    const std::vector<NodeId>& replicas = placement.ReadReplicasOf(TokenOf("k" + std::to_string(i)));
    if (std::find(replicas.begin(), replicas.end(), NodeId{1}) == replicas.end()) key = "k" + std::to_string(i);
  }
  const ClientResponse written = Call(::charybdis::testing::IfNotExistsRequest("t", "a", key, "v"), key, 3);
  ASSERT_EQ(written.code(), ClientResponse::OK) << written.message();
  ASSERT_TRUE(written.applied());
  cluster_.Crash(3);
  cluster_.Restart(2);
  const ShardId shard = ShardOf(TokenOf(key), 2);
  const auto node_1_seen_up = [&] {
    const std::vector<NodeId> live = cluster_.node(2).LiveNodesSeenBy(shard);
    return std::find(live.begin(), live.end(), NodeId{1}) != live.end();
  };
  for (Nanos waited = 0; waited < 5 * kSecond && !node_1_seen_up(); waited += 10 * kMicrosecond) {
    RunFor(10 * kMicrosecond);
  }
  ASSERT_TRUE(node_1_seen_up()) << "node 2 never heard node 1";
  // As a client would: again at once while node 2 is unavailable (it
  // has not heard node 4 yet).
  ClientResponse read;
  for (int attempt = 0; attempt < 500; attempt++) {
    read = Call(::charybdis::testing::GetRequest("t", key, CL_SERIAL), key, 2, 1 * kMillisecond);
    if (read.code() != ClientResponse::UNAVAILABLE) break;
  }
  ASSERT_EQ(read.code(), ClientResponse::OK) << read.message();
  ASSERT_EQ(read.rows_size(), 1) << "node 2 read among the owners of the topology it loaded";
  EXPECT_EQ(::charybdis::testing::FirstValue(read), "v");
}

class ReplaceTest : public JoinTest {
 protected:
  ReplaceTest()
      : JoinTest(/*beside_node_1=*/true,
                 "workload { name: \"replace\" operations { operation { kind: \"replace\" node: 4 replaced: 1 at_ms: 1000 } } }") {}
};

// Node 4 replaces node 1 (ctl replace's path): it waits while node 1 is
// alive, then takes its tokens; every key, written at ALL to the three
// members before, streams to it from the survivors, and node 1 has left.
TEST_F(ReplaceTest, ANewNodeReplacesADeadMemberOnceItIsDown) {
  std::vector<std::string> keys;
  for (int i = 0; i < 20; i++) {
    keys.push_back("k" + std::to_string(i));
    ASSERT_EQ(Call(::charybdis::testing::PutRequest("t", "a", keys.back(), "v", CL_ALL), keys.back(), 2).code(),
              ClientResponse::OK);
  }
  cluster_.StartNewNode(4);
  RunFor(3 * kSecond);
  EXPECT_EQ(Node4SeenBy(2), nullptr) << "a live node was replaced";
  EXPECT_EQ(cluster_.node(4).JoinWaitingFor(), "node 1 to be down: a replacement takes a dead node's place");
  cluster_.Crash(1);
  ASSERT_TRUE(RunUntil([this] {
    const topology::Member* member = Node4SeenBy(2);
    return member != nullptr && member->state == NodeState::kNormal;
  }, 30 * kSecond)) << "node 4 did not replace node 1";
  const topology::Topology& topology = cluster_.node(2).TopologyLog().topology();
  EXPECT_EQ(topology.Find(1)->state, NodeState::kLeft);
  std::set<Token> node_1s;
  for (const auto& vnode : cluster_.ring()->tokens()) {
    if (vnode.node == 1) node_1s.insert(vnode.token);
  }
  EXPECT_EQ(std::set<Token>(topology.Find(4)->tokens.begin(), topology.Find(4)->tokens.end()), node_1s)
      << "node 4 did not take node 1's tokens";
  // Three nodes at RF 3: node 4 holds every key, alone.
  cluster_.Crash(2);
  cluster_.Crash(3);
  RunFor(1500 * kMillisecond);
  for (const std::string& key : keys) {
    const ClientResponse read = Call(::charybdis::testing::GetRequest("t", key, CL_ONE), key, 4);
    ASSERT_EQ(read.code(), ClientResponse::OK) << read.message();
    ASSERT_EQ(read.rows_size(), 1) << "node 4 did not stream " << key;
  }
}

}  // namespace
}  // namespace charybdis::sim
