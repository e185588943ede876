// A topology operation that drives itself (core/topology/operation_driver.h),
// on a simulated 4-node cluster (RF 3) where node 4 decommissions and
// drives it: the pending replicas stream what they gain from node 4, then
// reads move, then the operation finishes, and a crash of any of them
// only delays it.

#include <gtest/gtest.h>

#include <limits>

#include "core/data/checked_value.h"
#include "core/data/storage_codec.h"
#include "tests/four_node_test.h"
#include "tests/requests.h"

namespace charybdis::sim {
namespace {

using topology::Entry;
using topology::NodeState;
using topology::Stage;

class OperationDriverTest : public FourNodeTest {
 protected:
  // Hints would bring a pending replica what it missed: only streaming may.
  OperationDriverTest() : FourNodeTest("coordinator { disable_hinted_handoff: true }") {}

  // A key node 4's decommission moves, written at ALL before it begins:
  // only the owners now hold it.
  Moving WriteAKeyThatMoves() {
    const absl::StatusOr<topology::Topology> begun =
        cluster_.node(1).TopologyLog().topology().Apply(Decommission4(Entry::Kind::kBegin, 4));
    EXPECT_TRUE(begun.ok()) << begun.status();
    const Moving moving = KeyThatMovesIn(*begun);
    EXPECT_EQ(Call(::charybdis::testing::PutRequest("t", "a", moving.key, "v", CL_ALL), moving.key).code(),
              ClientResponse::OK);
    return moving;
  }

  ClientResponse BeginDrivenBy4() { return Call(ChangeRequest(Decommission4(Entry::Kind::kBegin, 4)), "", 4); }

  const topology::Topology& TopologyOf(NodeId node) { return cluster_.node(node).TopologyLog().topology(); }
  bool Left(NodeId observer) {
    const topology::Member* member = TopologyOf(observer).Find(4);
    return member != nullptr && member->state == NodeState::kLeft;
  }

  // With the other owners after down, the pending replica coordinates a
  // read at ONE that only it can answer: the key is there only if it
  // streamed.
  void ExpectStreamedTo(const Moving& moving) {
    SetStayingOwnersDown(moving, true);
    const ClientResponse read =
        Call(::charybdis::testing::GetRequest("t", moving.key, CL_ONE), moving.key, moving.pending);
    ASSERT_EQ(read.code(), ClientResponse::OK) << read.message();
    ASSERT_EQ(read.rows_size(), 1) << "node " << moving.pending << " did not stream the key";
    EXPECT_EQ(::charybdis::testing::FirstValue(read), "v");
  }
};

TEST_F(OperationDriverTest, ADecommissionStreamsThenMovesReadsThenFinishes) {
  const Moving moving = WriteAKeyThatMoves();
  const uint64_t version = TopologyOf(1).version();
  const ClientResponse begun = BeginDrivenBy4();
  ASSERT_EQ(begun.code(), ClientResponse::OK) << begun.message();
  ASSERT_TRUE(RunUntil([this] { return Left(1); }, 20 * kSecond)) << "the decommission did not finish";
  // Begin, read new, finish: three versions, each entry applied.
  EXPECT_EQ(TopologyOf(1).version(), version + 3);
  const std::vector<Entry>& entries = cluster_.node(1).TopologyLog().entries();
  ASSERT_GE(entries.size(), 3u);
  EXPECT_EQ(entries[entries.size() - 3].kind, Entry::Kind::kBegin);
  EXPECT_EQ(entries[entries.size() - 2].kind, Entry::Kind::kReadNew);
  EXPECT_EQ(entries[entries.size() - 1].kind, Entry::Kind::kFinish);
  // A last barrier: once it passed, every live member holds the finish,
  // and node 4 may be stopped (ctl decommission returns then).
  ASSERT_TRUE(RunUntil([this] { return cluster_.node(4).OperationProgress().barrier_passed; }, 10 * kSecond));
  EXPECT_EQ(cluster_.node(4).OperationProgress().version, version + 3);
  for (NodeId node = 1; node <= 3; node++) EXPECT_EQ(TopologyOf(node).version(), version + 3) << node;
  ExpectStreamedTo(moving);
}

TEST_F(OperationDriverTest, ReadsWaitForTheStreamsAndTheDriverResumesAfterACrash) {
  const Moving moving = WriteAKeyThatMoves();
  // More keys, at ALL: the receivers that are up have some to store.
  for (int i = 0; i < 30; i++) {
    const std::string key = "more" + std::to_string(i);
    ASSERT_EQ(Call(::charybdis::testing::PutRequest("t", "a", key, "v", CL_ALL), key).code(), ClientResponse::OK);
  }
  cluster_.Crash(moving.pending);
  RunFor(1500 * kMillisecond);
  ASSERT_EQ(BeginDrivenBy4().code(), ClientResponse::OK);
  RunFor(5 * kSecond);
  // A receiver is down: its streams cannot be done, so reads stay, and the
  // driver's progress (what ctl decommission prints) says so.
  ASSERT_TRUE(TopologyOf(1).move().has_value());
  EXPECT_EQ(TopologyOf(1).move()->stage, Stage::kWriteBothReadOld);
  const topology::OperationDriver::Progress progress = cluster_.node(4).OperationProgress();
  EXPECT_EQ(progress.version, TopologyOf(1).version());
  EXPECT_TRUE(progress.barrier_passed);
  EXPECT_GT(progress.streams, progress.streams_done);
  EXPECT_GT(progress.streams_done, 0u);  // the receivers that are up are done
  // Their pairs' bytes (keys and values), and a time left as they took.
  EXPECT_GT(progress.pairs, 0u);
  EXPECT_GE(progress.bytes, progress.pairs * 2);
  EXPECT_GT(progress.estimated_left, 0);
  // The driver crashes too, and the receiver comes back meanwhile.
  cluster_.Crash(4);
  cluster_.Restart(moving.pending);
  RunFor(15 * kSecond);
  EXPECT_EQ(TopologyOf(1).move()->stage, Stage::kWriteBothReadOld) << "no driver: nothing moves";
  // Back from its log, the driver asks again, and the streams resume.
  cluster_.Restart(4);
  ASSERT_TRUE(RunUntil([this] { return Left(1); }, 30 * kSecond)) << "the decommission did not finish";
  ExpectStreamedTo(moving);
}

// The fence: once a barrier has passed, a replica refuses a write routed by
// an older topology (its coordinator may have left out a replica that now
// counts), and takes one of the current version, or one no topology
// routed (a hint); reads alike.
TEST_F(OperationDriverTest, AReplicaRefusesAWriteOrReadRoutedByATopologyABarrierPassed) {
  ASSERT_EQ(BeginDrivenBy4().code(), ClientResponse::OK);
  ASSERT_TRUE(RunUntil([this] { return Left(1); }, 20 * kSecond)) << "the decommission did not finish";
  RunFor(3 * kSecond);  // the last barrier's drain is over everywhere
  const std::string key = "fenced";
  // Sends `message` to the shard of node 1 that owns the key, as a
  // coordinator would, and returns what came back.
  auto exchange = [&](Envelope message) {
    others_.clear();
    cluster_.network().Send(Address{client_, 0}, Address{1, ShardOf(TokenOf(key), 2)}, std::move(message));
    RunFor(100 * kMillisecond);
    return others_;
  };
  auto write = [&](uint64_t version) {
    Envelope message;
    ReplicaWrite& write = *message.mutable_replica_write();
    write.set_request_id(500 + version);
    write.set_topology_version(version);
    write.mutable_mutation()->set_table("t");
    write.mutable_mutation()->set_partition_key(key);
    CellData& cell = *write.mutable_mutation()->add_rows()->add_cells();
    cell.set_column("a");
    cell.set_timestamp(simulator_.now() / kMicrosecond);
    cell.set_value("v");
    const std::vector<Envelope> answers = exchange(std::move(message));
    EXPECT_EQ(answers.size(), 1u);
    return answers.empty() ? ReplicaWriteAck() : answers.front().replica_write_ack();
  };
  const uint64_t current = TopologyOf(1).version();
  const ReplicaWriteAck stale = write(current - 3);  // before the decommission began
  EXPECT_TRUE(stale.fenced());
  EXPECT_FALSE(stale.ok());
  EXPECT_TRUE(write(current).ok());
  EXPECT_TRUE(write(0).ok());
  auto read = [&](uint64_t version) {
    Envelope message;
    ReplicaRead& read = *message.mutable_replica_read();
    read.set_request_id(700 + version);
    read.set_topology_version(version);
    read.mutable_read()->set_table("t");
    read.mutable_read()->set_partition_key(key);
    const std::vector<Envelope> answers = exchange(std::move(message));
    EXPECT_GE(answers.size(), 1u);  // a read's answer may come twice
    return answers.empty() ? ReplicaReadResponse() : answers.front().replica_read_response();
  };
  EXPECT_FALSE(read(current - 3).ok());
  const ReplicaReadResponse fresh = read(current);
  EXPECT_TRUE(fresh.ok());
  EXPECT_EQ(fresh.data().rows_size(), 1);
  // Scans alike: refused naming the fence, which the coordinator's rerun
  // waits for.
  auto scan = [&](uint64_t version) {
    Envelope message;
    ReplicaScan& scan = *message.mutable_replica_scan();
    scan.set_request_id(800 + version);
    scan.set_topology_version(version);
    scan.mutable_scan()->set_table("t");
    scan.mutable_scan()->set_start_token(std::numeric_limits<Token>::min());
    scan.mutable_scan()->set_end_token(std::numeric_limits<Token>::max());
    scan.mutable_scan()->set_limit(100);
    const std::vector<Envelope> answers = exchange(std::move(message));
    EXPECT_GE(answers.size(), 1u);  // an answer may come twice
    return answers.empty() ? ReplicaScanResponse() : answers.front().replica_scan_response();
  };
  const ReplicaScanResponse stale_scan = scan(current - 3);
  EXPECT_FALSE(stale_scan.ok());
  EXPECT_GT(stale_scan.fence(), current - 3);
  const ReplicaScanResponse fresh_scan = scan(current);
  EXPECT_TRUE(fresh_scan.ok());
  EXPECT_EQ(fresh_scan.fence(), 0u);
  EXPECT_GE(fresh_scan.partitions_size(), 1);
  // Paxos alike: a prepare or accept of a round whose participants an
  // older topology chose is refused; one of the current version, or of no
  // topology (the logs' own rounds), is not.
  Ballot ballot;
  ballot.set_micros(simulator_.now() / kMicrosecond + 1000);
  ballot.set_unique(9);
  auto prepare = [&](uint64_t version) {
    ballot.set_micros(ballot.micros() + 1);
    Envelope message;
    PaxosPrepare& prepare = *message.mutable_paxos_prepare();
    prepare.set_request_id(900 + version);
    *prepare.mutable_ballot() = ballot;
    prepare.set_table("t");
    prepare.set_partition_key(key);
    prepare.set_topology_version(version);
    const std::vector<Envelope> answers = exchange(std::move(message));
    EXPECT_EQ(answers.size(), 1u);
    return answers.empty() ? PaxosPromise() : answers.front().paxos_promise();
  };
  const PaxosPromise stale_promise = prepare(current - 3);
  EXPECT_TRUE(stale_promise.fenced());
  EXPECT_FALSE(stale_promise.promised());
  EXPECT_TRUE(prepare(current).promised());
  EXPECT_TRUE(prepare(0).promised());
  auto accept = [&](uint64_t version) {
    Envelope message;
    PaxosAccept& accept = *message.mutable_paxos_accept();
    accept.set_request_id(950 + version);
    accept.set_topology_version(version);
    *accept.mutable_proposal()->mutable_ballot() = ballot;
    accept.mutable_proposal()->mutable_mutation()->set_table("t");
    accept.mutable_proposal()->mutable_mutation()->set_partition_key(key);
    const std::vector<Envelope> answers = exchange(std::move(message));
    EXPECT_EQ(answers.size(), 1u);
    return answers.empty() ? PaxosAcceptReply() : answers.front().paxos_accept_reply();
  };
  const PaxosAcceptReply stale_accept = accept(current - 3);
  EXPECT_TRUE(stale_accept.fenced());
  EXPECT_FALSE(stale_accept.accepted());
  EXPECT_TRUE(accept(current).accepted());
}

// ScyllaDB #5251: a value accepted by a quorum of the old owners, node 4
// among them, but committed nowhere. Once node 4 has left and the other
// old owner that accepted it is down, a quorum of the owners after is the
// third old owner and the new one: the value survives only if its Paxos
// state moved with the range, and a serial read then finishes it.
TEST_F(OperationDriverTest, AnAcceptedValueOnTheLeavingNodeMovesWithItsRange) {
  const absl::StatusOr<topology::Topology> begun =
      cluster_.node(1).TopologyLog().topology().Apply(Decommission4(Entry::Kind::kBegin, 4));
  ASSERT_TRUE(begun.ok()) << begun.status();
  const Moving moving = KeyThatMovesIn(*begun);
  std::vector<NodeId> staying;
  for (NodeId node : moving.natural) {
    if (node != 4) staying.push_back(node);
  }
  ASSERT_EQ(staying.size(), 2u);
  const int64_t micros = simulator_.now() / kMicrosecond;
  PaxosState state;
  Proposal& accepted = *state.mutable_accepted();
  accepted.mutable_ballot()->set_micros(micros);
  accepted.mutable_ballot()->set_unique(77);
  *accepted.mutable_origin() = accepted.ballot();
  *state.mutable_promised() = accepted.ballot();
  PartitionData& mutation = *accepted.mutable_mutation();
  mutation.set_table("t");
  mutation.set_partition_key(moving.key);
  CellData& cell = *mutation.add_rows()->add_cells();
  cell.set_column("a");
  cell.set_timestamp(micros);
  cell.set_value("v");
  const std::string key = storage_codec::PaxosKey("t", moving.key);
  for (NodeId node : {NodeId{4}, staying[0]}) {
    WriteBatch batch;
    batch.Put(key, checked_value::Seal(key, state.SerializeAsString()));
    cluster_.node(node).storage(ShardOf(TokenOf(moving.key), 2)).Apply(std::move(batch), Durability::kSynced,
                                                                        [](absl::Status) {});
  }
  RunFor(10 * kMillisecond);
  ASSERT_EQ(BeginDrivenBy4().code(), ClientResponse::OK);
  ASSERT_TRUE(RunUntil([this] { return Left(1); }, 20 * kSecond)) << "the decommission did not finish";
  cluster_.Crash(staying[0]);
  RunFor(1500 * kMillisecond);
  const ClientResponse read =
      Call(::charybdis::testing::GetRequest("t", moving.key, CL_SERIAL), moving.key, staying[1]);
  ASSERT_EQ(read.code(), ClientResponse::OK) << read.message();
  ASSERT_EQ(read.rows_size(), 1) << "the accepted value was left behind on node 4";
  EXPECT_EQ(::charybdis::testing::FirstValue(read), "v");
}

}  // namespace
}  // namespace charybdis::sim
