// The topology agent (core/topology/topology_agent.h) on a simulated 3-node
// cluster: a change is decided once and reaches every node, a second
// operation is refused while one runs, the log outlives a power cut of
// every node, and a node that was down reads what it missed.

#include "core/topology/topology_agent.h"

#include <gtest/gtest.h>

#include "sim/cluster.h"
#include "sim/crash_point.h"
#include "tests/fake_env.h"
#include "tests/scenario_text.h"

namespace charybdis::sim {
namespace {

using testing::BaseScenario;
using testing::MustParse;
using topology::Entry;
using topology::Operation;

Entry Begin(Operation operation, NodeId node) {
  Entry entry;
  entry.kind = Entry::Kind::kBegin;
  entry.operation = operation;
  entry.node = node;
  if (operation == Operation::kJoin) {
    entry.joining = topology::Member{node, "10.0.0.4", "dc1", "r1", {12345, 67890}, topology::NodeState::kJoining};
  }
  return entry;
}

ReplicationConfig Simple(uint32_t factor) {
  ReplicationConfig replication;
  replication.strategy = ReplicationConfig::Strategy::kSimple;
  replication.replication_factor = factor;
  return replication;
}

// A change of keyspace ks's replication, driven by node 1, as a node whose
// schema places ks by `from` asks it.
Entry Replicate(const ReplicationConfig& from, const ReplicationConfig& to) {
  Entry entry = Begin(Operation::kReplicate, 1);
  entry.driver = 1;
  entry.replicating = topology::ReplicationMove{"ks", 4, from, to, "ALTER KEYSPACE ks WITH replication = {}"};
  return entry;
}

class TopologyAgentTest : public ::testing::Test {
 protected:
  TopologyAgentTest()
      : scenario_(MustParse(BaseScenario())),
        buggify_(false, Random(1)),
        cluster_(simulator_, scenario_, Random(5), buggify_, &probes_),
        client_(cluster_.AddClient(0)) {
    cluster_.network().SetReceiver(Address{client_, 0}, [this](const Envelope& message) {
      if (message.has_client_response()) answers_.push_back(message.client_response());
    });
    cluster_.StartAll();
    RunFor(500 * kMillisecond);
  }

  // Sends a change to `node`'s shard `shard`, without running the simulation.
  void Submit(const std::map<std::string, std::string>& columns, NodeId node, ShardId shard) {
    Envelope message;
    message.mutable_client_request()->set_request_id(++sent_);
    for (const auto& [column, value] : columns) {
      (*message.mutable_client_request()->mutable_topology_change()->mutable_entry())[column] = value;
    }
    cluster_.network().Send(Address{client_, 0}, Address{node, shard}, std::move(message));
  }
  // Submits a change and runs until it is answered (or 10 s).
  ClientResponse Change(const std::map<std::string, std::string>& columns, NodeId node = 1, ShardId shard = 1) {
    const size_t before = answers_.size();
    Submit(columns, node, shard);
    for (int i = 0; i < 1000 && answers_.size() == before; i++) RunFor(10 * kMillisecond);
    EXPECT_EQ(answers_.size(), before + 1) << "no answer";
    return answers_.size() > before ? answers_.back() : ClientResponse();
  }
  ClientResponse Change(const Entry& entry, NodeId node = 1) { return Change(topology::EntryColumns(entry), node); }

  uint64_t SequenceOf(NodeId node) { return cluster_.node(node).TopologyLog().sequence(); }
  void RunFor(Nanos time) { simulator_.RunUntil(simulator_.now() + time); }

  Simulator simulator_;
  LoadedScenario scenario_;
  SimBuggify buggify_;
  ::charybdis::testing::CountingProbes probes_;
  Cluster cluster_;
  NodeId client_;
  uint64_t sent_ = 0;
  std::vector<ClientResponse> answers_;
};

TEST_F(TopologyAgentTest, AChangeIsDecidedOnceAndReachesEveryNode) {
  const ClientResponse answer = Change(Begin(Operation::kJoin, 4), 2);
  ASSERT_EQ(answer.code(), ClientResponse::OK) << answer.message();
  EXPECT_EQ(answer.topology_sequence(), 1u);
  EXPECT_EQ(answer.topology_version(), 2u);  // the bootstrap topology is version 1
  RunFor(1000 * kMillisecond);  // heartbeats tell the others
  for (NodeId node = 1; node <= 3; node++) {
    const topology::Topology& topology = cluster_.node(node).TopologyLog().topology();
    EXPECT_EQ(topology.version(), 2u) << "node " << node;
    ASSERT_TRUE(topology.move().has_value()) << "node " << node;
    EXPECT_EQ(topology.move()->operation, Operation::kJoin);
    EXPECT_EQ(topology.Find(4)->state, topology::NodeState::kJoining);
    EXPECT_EQ(cluster_.node(node).TopologyLog(1).topology().version(), 2u) << "shard 1 of node " << node;
  }
}

TEST_F(TopologyAgentTest, ASecondOperationIsRefusedWithTheFirstsReason) {
  ASSERT_EQ(Change(Begin(Operation::kJoin, 4)).code(), ClientResponse::OK);
  // Asked of another node, which must not refuse on its own lag alone.
  const ClientResponse refused = Change(Begin(Operation::kJoin, 5), 3);
  EXPECT_EQ(refused.code(), ClientResponse::INVALID_REQUEST);
  EXPECT_NE(refused.message().find("in progress"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("join of node 4"), std::string::npos) << refused.message();
  RunFor(1000 * kMillisecond);
  for (NodeId node = 1; node <= 3; node++) EXPECT_EQ(SequenceOf(node), 1u) << "node " << node;
}

// Three nodes, RF 3: none may leave, and the refusal says which
// replication it would break. A join first and its roll back are fine.
TEST_F(TopologyAgentTest, AChangeThatLeavesTooFewOwnersForAReplicationIsRefused) {
  const ClientResponse refused = Change(Begin(Operation::kDecommission, 3));
  EXPECT_EQ(refused.code(), ClientResponse::INVALID_REQUEST);
  EXPECT_NE(refused.message().find("fewer than its replication factor 3"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("(the replication of the cluster)"), std::string::npos) << refused.message();
  EXPECT_EQ(SequenceOf(1), 0u);
  ASSERT_EQ(Change(Begin(Operation::kJoin, 4)).code(), ClientResponse::OK);
  Entry roll_back;
  roll_back.kind = Entry::Kind::kRollBack;
  roll_back.operation = Operation::kJoin;
  roll_back.node = 4;
  EXPECT_EQ(Change(roll_back).code(), ClientResponse::OK);
  EXPECT_EQ(SequenceOf(1), 2u);
}

// The second ALTER was asked while the first ran, of a node whose schema
// does not hold the first yet: it goes from what the first gave the
// keyspace, or it would place the keyspace by a replication gone
// (scenarios/replicate_class seed 86).
TEST_F(TopologyAgentTest, AChangeOfReplicationGoesFromWhatTheLastOneGave) {
  ASSERT_EQ(Change(Replicate(Simple(1), Simple(2))).code(), ClientResponse::OK);
  // Node 1 drives it to its finish: ks has no tables to stream, and its
  // ALTER is refused by a schema without ks, which the driver lets be.
  for (int i = 0; i < 100 && cluster_.node(1).TopologyLog().topology().move(); i++) RunFor(100 * kMillisecond);
  ASSERT_FALSE(cluster_.node(1).TopologyLog().topology().move().has_value());
  ASSERT_EQ(Change(Replicate(Simple(1), Simple(3))).code(), ClientResponse::OK);
  const topology::Topology& topology = cluster_.node(1).TopologyLog().topology();
  ASSERT_TRUE(topology.move().has_value());
  EXPECT_EQ(topology.move()->replicating.from, Simple(2));
  EXPECT_EQ(topology.move()->replicating.to, Simple(3));
}

TEST_F(TopologyAgentTest, AMalformedChangeIsRefused) {
  const ClientResponse refused = Change({{"kind", "begin"}, {"operation", "teleport"}});
  EXPECT_EQ(refused.code(), ClientResponse::INVALID_REQUEST);
  EXPECT_NE(refused.message().find("not a topology change"), std::string::npos) << refused.message();
  EXPECT_EQ(SequenceOf(1), 0u);
}

TEST_F(TopologyAgentTest, TheLogOutlivesAPowerCutOfEveryNode) {
  ASSERT_EQ(Change(Begin(Operation::kJoin, 4)).code(), ClientResponse::OK);
  for (NodeId node = 1; node <= 3; node++) cluster_.Crash(node, CrashKind::kPowerCut);
  for (NodeId node = 1; node <= 3; node++) cluster_.Restart(node);
  RunFor(2000 * kMillisecond);
  for (NodeId node = 1; node <= 3; node++) {
    EXPECT_EQ(SequenceOf(node), 1u) << "node " << node;
    EXPECT_EQ(cluster_.node(node).TopologyLog().topology().Find(4)->state, topology::NodeState::kJoining);
    EXPECT_EQ(cluster_.node(node).TopologyLog(1).sequence(), 1u) << "shard 1, from the copy loaded at start";
  }
}

TEST_F(TopologyAgentTest, AnAcknowledgedChangeOutlivesAPowerCutAtOnce) {
  // The moment node 1 answers, the power fails everywhere: only what was
  // synced before the answer is left, and the other nodes hold the entry
  // only as Paxos state, so node 1's copy is what tells them.
  CrashPoint point;
  point.point = scenario::CrashPointFault::AFTER_REPLY;
  point.reply = Envelope::kClientResponse;
  point.fire = [this] {
    for (NodeId node = 1; node <= 3; node++) cluster_.Crash(node, CrashKind::kPowerCut);
  };
  cluster_.node(1).ArmCrashPoint(std::move(point));
  Submit(topology::EntryColumns(Begin(Operation::kJoin, 4)), 1, 0);
  RunFor(500 * kMillisecond);
  ASSERT_FALSE(cluster_.node(1).running());
  for (NodeId node = 1; node <= 3; node++) cluster_.Restart(node);
  // Two nodes read the entry at once: a read may lose the duel and be
  // tried again a second later.
  RunFor(5000 * kMillisecond);
  for (NodeId node = 1; node <= 3; node++) EXPECT_EQ(SequenceOf(node), 1u) << "node " << node;
}

TEST_F(TopologyAgentTest, ANodeThatWasDownReadsWhatItMissed) {
  cluster_.Crash(3);
  RunFor(1000 * kMillisecond);  // convicted: two of three decide
  ASSERT_EQ(Change(Begin(Operation::kJoin, 4)).code(), ClientResponse::OK);
  Entry read_new;
  read_new.kind = Entry::Kind::kReadNew;
  read_new.operation = Operation::kJoin;
  read_new.node = 4;
  ASSERT_EQ(Change(read_new, 2).code(), ClientResponse::OK);
  const int paxos_reads = probes_.reached["topology.entry_read"];
  cluster_.Restart(3);
  RunFor(3000 * kMillisecond);
  EXPECT_EQ(SequenceOf(3), 2u);
  EXPECT_TRUE(probes_.Saw("topology.behind_a_peer"));
  // From a peer's copy, which comes within a round trip (entries read by
  // Paxos are topology_log's sweep_reaches_probe).
  EXPECT_TRUE(probes_.Saw("topology.entry_copied_from_peer"));
  // The copy came within kCopyWait, so node 3 read nothing by Paxos: a
  // Paxos read of the log contends with the changes being proposed.
  EXPECT_EQ(probes_.reached["topology.entry_read"], paxos_reads);
  EXPECT_EQ(cluster_.node(3).TopologyLog().entries().back().kind, Entry::Kind::kReadNew);
  EXPECT_EQ(cluster_.node(3).TopologyLog(1).sequence(), 2u) << "shard 1 follows as each entry is read";
}

}  // namespace
}  // namespace charybdis::sim
