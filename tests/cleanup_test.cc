// ctl cleanup (core/topology/node_cleanup.h, core/replica/range_cleanup.h):
// on a simulated cluster of three (RF 3, a rack each) that node 4 joins on
// a rack of its own, each old member loses ranges to node 4 and still
// holds their rows and Paxos states; a cleanup removes exactly those, and
// is refused while the join runs.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/data/storage_codec.h"
#include "core/topology/placement.h"
#include "tests/four_node_test.h"
#include "tests/requests.h"

namespace charybdis::sim {
namespace {

class CleanupTest : public FourNodeTest {
 protected:
  explicit CleanupTest(bool beside_node_1 = false) : FourNodeTest(Scenario{ThreeNodesAndANewOne(beside_node_1)}) {}

  static ClientRequest CleanupRequest() {
    ClientRequest request;
    request.mutable_cleanup();
    return request;
  }
  // Sent to shard 1 of `node`, which hands it to shard 0.
  ClientResponse CleanUp(NodeId node) { return Call(CleanupRequest(), "k1", node); }

  // Whether `node` stores any row of `key`'s partition, or its Paxos state.
  bool StoresRow(NodeId node, const std::string& key) { return StoresPrefix(node, storage_codec::PartitionPrefix("t", key)); }
  bool StoresPaxosState(NodeId node, const std::string& key) { return StoresPrefix(node, storage_codec::PaxosKey("t", key)); }
  bool StoresPrefix(NodeId node, const std::string& prefix) {
    for (ShardId shard = 0; shard < 2; shard++) {
      const SimStorage::Contents& stored = cluster_.node(node).storage(shard).contents();
      auto it = stored.lower_bound(prefix);
      if (it != stored.end() && it->first.compare(0, prefix.size(), prefix) == 0) return true;
    }
    return false;
  }
  bool Replicates(NodeId node, const std::string& key) {
    const topology::Placement placement(cluster_.node(1).TopologyLog().topology(),
                                        cluster_.ring()->layout().replication, 2);
    const std::vector<NodeId>& replicas = placement.ReadReplicasOf(TokenOf(key));
    return std::find(replicas.begin(), replicas.end(), node) != replicas.end();
  }
};

TEST_F(CleanupTest, WithEveryTokenReplicatedThereIsNothingToRemove) {
  ASSERT_EQ(Call(::charybdis::testing::PutRequest("t", "a", "k1", "v", CL_ALL), "k1", 1).code(), ClientResponse::OK);
  const ClientResponse cleaned = CleanUp(1);
  ASSERT_EQ(cleaned.code(), ClientResponse::OK) << cleaned.message();
  EXPECT_EQ(cleaned.cleanup_pairs(), 0u);
  EXPECT_TRUE(StoresRow(1, "k1"));
}

// Rows written at ALL and LWTs (Paxos states) on the three members, then
// node 4 joins: node 1 removes what node 4 took from it, keeps the rest,
// and every key still reads back at ALL.
TEST_F(CleanupTest, AfterAJoinAnOldOwnerRemovesWhatItLostAndOnlyThat) {
  std::vector<std::string> keys;
  for (int i = 0; i < 40; i++) {
    keys.push_back("k" + std::to_string(i));
    const ClientResponse written = Call(::charybdis::testing::IfNotExistsRequest("t", "a", keys.back(), "v"), keys.back(), 1);
    ASSERT_EQ(written.code(), ClientResponse::OK) << written.message();
    ASSERT_EQ(Call(::charybdis::testing::PutRequest("t", "a", keys.back(), "w", CL_ALL), keys.back(), 1).code(),
              ClientResponse::OK);
  }
  cluster_.StartNewNode(4);
  ASSERT_TRUE(RunUntil([this] { return Node4Normal(); }, 30 * kSecond)) << "node 4 did not join";
  RunFor(1 * kSecond);
  size_t lost = 0;
  for (const std::string& key : keys) lost += !Replicates(1, key);
  ASSERT_GT(lost, 0u) << "node 4 took no key from node 1";
  for (const std::string& key : keys) ASSERT_TRUE(StoresRow(1, key)) << key << ": kept until the cleanup";

  const ClientResponse cleaned = CleanUp(1);
  ASSERT_EQ(cleaned.code(), ClientResponse::OK) << cleaned.message();
  EXPECT_GE(cleaned.cleanup_pairs(), 2 * lost) << "a row and a Paxos state per key lost, at least";
  EXPECT_GT(cleaned.cleanup_bytes(), cleaned.cleanup_pairs());
  for (const std::string& key : keys) {
    EXPECT_EQ(StoresRow(1, key), Replicates(1, key)) << key;
    EXPECT_EQ(StoresPaxosState(1, key), Replicates(1, key)) << key;
    const ClientResponse read = Call(::charybdis::testing::GetRequest("t", key, CL_ALL), key, 2);
    ASSERT_EQ(read.code(), ClientResponse::OK) << read.message();
    ASSERT_EQ(read.rows_size(), 1) << key;
    EXPECT_EQ(::charybdis::testing::FirstValue(read), "w") << key;
  }
  // Again: nothing left to remove.
  EXPECT_EQ(CleanUp(1).cleanup_pairs(), 0u);
}

TEST_F(CleanupTest, RefusedWhileAJoinRuns) {
  cluster_.StartNewNode(4);
  ASSERT_TRUE(RunUntil([this] { return Node4SeenBy(1) != nullptr; }, 30 * kSecond)) << "node 4 never asked to join";
  const ClientResponse refused = CleanUp(1);
  EXPECT_EQ(refused.code(), ClientResponse::INVALID_REQUEST);
  EXPECT_NE(refused.message().find("join of node 4 is in progress"), std::string::npos) << refused.message();
}

// Node 1 cleans up many keys while node 4, just joined, begins to
// decommission: node 1 regains ranges it is removing, and streams bring
// them back. The cleanup stops once node 1 holds the new version, and
// node 1 ends holding every key it replicates again.
TEST_F(CleanupTest, ACleanupTheTopologyOvertakesStopsAndLosesNothing) {
  std::vector<std::string> keys;
  for (int i = 0; i < 20000; i++) {
    keys.push_back("k" + std::to_string(i));
    ASSERT_EQ(Call(::charybdis::testing::PutRequest("t", "a", keys.back(), "v", CL_ALL), keys.back(), 1).code(),
              ClientResponse::OK);
  }
  cluster_.StartNewNode(4);
  ASSERT_TRUE(RunUntil([this] { return Node4Normal(); }, 30 * kSecond)) << "node 4 did not join";
  RunFor(1 * kSecond);
  ClientRequest cleanup = CleanupRequest();
  cleanup.set_request_id(++sent_);
  Envelope message;
  *message.mutable_client_request() = std::move(cleanup);
  cluster_.network().Send(Address{client_, 0}, Address{1, 0}, std::move(message));
  const uint64_t cleanup_id = sent_;
  const ClientResponse begun = Call(ChangeRequest(Decommission4(topology::Entry::Kind::kBegin, /*driver=*/4)), "", 4);
  ASSERT_EQ(begun.code(), ClientResponse::OK) << begun.message();
  ASSERT_TRUE(RunUntil([&] { return answers_.count(cleanup_id) > 0; }, 10 * kSecond)) << "the cleanup never ended";
  const ClientResponse& cleaned = answers_[cleanup_id];
  EXPECT_NE(cleaned.code(), ClientResponse::OK) << "the cleanup was not overtaken: " << cleaned.cleanup_pairs() << " pairs";
  EXPECT_NE(cleaned.message().find("topology moved"), std::string::npos) << cleaned.message();
  ASSERT_TRUE(RunUntil([this] { return Node4SeenBy(1)->state == topology::NodeState::kLeft; }, 60 * kSecond))
      << "node 4 did not leave";
  for (const std::string& key : keys) {
    ASSERT_TRUE(Replicates(1, key));  // three nodes again
    ASSERT_TRUE(StoresRow(1, key)) << key << " lost";
  }
}

class CleanupBesideNode1Test : public CleanupTest {
 protected:
  CleanupBesideNode1Test() : CleanupTest(/*beside_node_1=*/true) {}
};

// Node 2 is down while node 4 joins beside node 1, and restarts with the
// bootstrap topology it kept. Until it holds its peers' log it refuses to
// clean up: by what it loaded it might miss an operation in progress.
TEST_F(CleanupBesideNode1Test, RefusedUntilTheNodeHoldsItsPeersLog) {
  cluster_.Crash(2);
  RunFor(1 * kSecond);
  cluster_.StartNewNode(4);
  ASSERT_TRUE(RunUntil([this] { return Node4Normal(); }, 30 * kSecond)) << "node 4 did not join";
  cluster_.Restart(2);
  const ClientResponse refused = CleanUp(2);
  EXPECT_EQ(refused.code(), ClientResponse::UNAVAILABLE) << refused.message();
  EXPECT_NE(refused.message().find("catching up"), std::string::npos) << refused.message();
  RunFor(2 * kSecond);
  const ClientResponse cleaned = CleanUp(2);
  EXPECT_EQ(cleaned.code(), ClientResponse::OK) << cleaned.message();
}

}  // namespace
}  // namespace charybdis::sim
