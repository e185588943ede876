// Scripted stories of lightweight transactions on a simulated 3-node
// cluster (RF=3, two shards per node).

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/data/storage_codec.h"
#include "core/paxos/acceptor.h"
#include "core/paxos/ballot.h"
#include "core/data/token.h"
#include "sim/cluster.h"
#include "sim/scenario_checks.h"
#include "tests/requests.h"
#include "tests/scenario_text.h"

namespace charybdis::sim {
namespace {

using testing::BaseScenario;
using testing::MustParse;

// Two conditional writes of one row and what they were told; `joined_late`:
// how many writes joined a round late meanwhile.
struct TwoWrites {
  ClientResponse first, second;
  uint64_t joined_late = 0;
};

class LwtTest : public ::testing::Test {
 protected:
  LwtTest()
      : scenario_(MustParse(BaseScenario("schema { table { name: \"t\" column: \"v\" column: \"w\" } }"))),
        buggify_(false, Random(1)),
        cluster_(simulator_, scenario_, Random(3), buggify_) {
    for (int i = 0; i < 8; i++) {
      const NodeId id = cluster_.AddClient(0);
      clients_.push_back(id);
      cluster_.network().SetReceiver(Address{id, 0}, [this](const Envelope& message) {
        responses_[message.client_response().request_id()] = message.client_response();
      });
    }
    cluster_.StartAll();
    simulator_.RunUntil(500 * kMillisecond);
  }

  uint64_t Send(ClientRequest request, NodeId coordinator = 1, size_t client = 0) {
    const std::string& key = request.has_cas() ? request.cas().statement(0).write().partition_key()
                                               : request.read().partition_key();
    request.set_request_id(++last_request_);
    Envelope message;
    *message.mutable_client_request() = request;
    cluster_.network().Send(Address{clients_[client], 0},
                            Address{coordinator, ShardOf(TokenOf(key), 2)}, std::move(message));
    return last_request_;
  }
  ClientResponse Call(ClientRequest request, NodeId coordinator = 1) {
    const uint64_t id = Send(std::move(request), coordinator);
    for (int i = 0; i < 100 && !responses_.count(id); i++) {
      simulator_.RunUntil(simulator_.now() + 10 * kMillisecond);
    }
    EXPECT_TRUE(responses_.count(id)) << "no answer";
    return responses_[id];
  }

  static CasStatement Statement(const std::string& key, const std::string& value) {
    CasStatement statement;
    *statement.mutable_write() = ::charybdis::testing::PutOp("t", "v", key, value);
    return statement;
  }
  static ClientRequest IfNotExists(const std::string& key, const std::string& value) {
    return ::charybdis::testing::IfNotExistsRequest("t", "v", key, value);
  }
  static ClientRequest If(const std::string& key, Condition::Op op, const std::string& expected,
                          const std::string& value) {
    return ::charybdis::testing::IfRequest("t", "v", key, op, expected, value);
  }
  static ClientRequest Read(const std::string& key, ConsistencyLevel level) {
    return ::charybdis::testing::GetRequest("t", key, level);
  }
  static std::string ValueOf(const ClientResponse& response) { return ::charybdis::testing::FirstValue(response); }
  uint64_t Metric(const std::string& name) { return MetricTotals(cluster_)[name]; }
  // The Paxos state node `node` keeps for partition `key` of table "t".
  PaxosState StateOn(NodeId node, const std::string& key) {
    const auto& contents =
        cluster_.node(node).storage(ShardOf(TokenOf(key), 2)).contents();
    auto it = contents.find(storage_codec::PaxosKey("t", key));
    PaxosState state;
    if (it != contents.end()) {
      EXPECT_TRUE(ParseStoredPaxosState(it->first, it->second, state));
    }
    return state;
  }

  // Writes `initial` to row `key`, then sends two conditional writes of it
  // (IF v = `expected` SET v = "1", then "2") one microsecond apart, from
  // two clients to one coordinator: the second arrives while the first
  // one's round gathers its promises.
  TwoWrites TwoWritesApart(const std::string& key, const std::string& initial, const std::string& expected) {
    EXPECT_TRUE(Call(IfNotExists(key, initial)).applied());
    simulator_.RunUntil(simulator_.now() + 50 * kMillisecond);
    const uint64_t joined = Metric("cas_write_joined_late");
    const uint64_t first = Send(If(key, Condition::EQ, expected, "1"), 1, 0);
    simulator_.RunUntil(simulator_.now() + 1 * kMicrosecond);
    const uint64_t second = Send(If(key, Condition::EQ, expected, "2"), 1, 1);
    simulator_.RunUntil(simulator_.now() + 1 * kSecond);
    EXPECT_TRUE(responses_.count(first) && responses_.count(second)) << "no answer";
    for (uint64_t id : {first, second}) {
      EXPECT_EQ(responses_[id].code(), ClientResponse::OK) << responses_[id].message();
    }
    return TwoWrites{responses_[first], responses_[second], Metric("cas_write_joined_late") - joined};
  }

  Simulator simulator_;
  LoadedScenario scenario_;
  SimBuggify buggify_;
  Cluster cluster_;
  std::vector<NodeId> clients_;
  uint64_t last_request_ = 0;
  std::map<uint64_t, ClientResponse> responses_;
};

TEST_F(LwtTest, UncontendedWriteTakesTwoRoundTripsAndSerialReadOne) {
  const ClientResponse written = Call(IfNotExists("k", "a"));
  ASSERT_EQ(written.code(), ClientResponse::OK) << written.message();
  EXPECT_TRUE(written.applied());
  EXPECT_EQ(written.round_trips(), 2u);
  simulator_.RunUntil(simulator_.now() + 50 * kMillisecond);  // the commit lands
  const ClientResponse read = Call(Read("k", CL_SERIAL), 2);
  ASSERT_EQ(read.code(), ClientResponse::OK) << read.message();
  EXPECT_EQ(ValueOf(read), "a");
  EXPECT_EQ(read.round_trips(), 1u);
  EXPECT_EQ(Metric("cas_total_operations"), 2u);
}

TEST_F(LwtTest, IfNotExistsAppliesExactlyOnceAmongConcurrentClients) {
  std::vector<uint64_t> ids;
  for (size_t client = 0; client < 8; client++) {
    ids.push_back(Send(IfNotExists("hot", "from-" + std::to_string(client)),
                       static_cast<NodeId>(1 + client % 3), client));
  }
  simulator_.RunUntil(simulator_.now() + 3 * kSecond);
  const std::string winner = ValueOf(Call(Read("hot", CL_SERIAL)));
  ASSERT_NE(winner, "");
  const size_t winning_client = std::stoul(winner.substr(5));
  int applied = 0;
  for (size_t client = 0; client < 8; client++) {
    ASSERT_TRUE(responses_.count(ids[client]));
    const ClientResponse& response = responses_[ids[client]];
    if (response.code() == ClientResponse::WRITE_TIMEOUT) {
      // Uncertain: it may be the winner, never a second one.
      continue;
    }
    ASSERT_EQ(response.code(), ClientResponse::OK) << response.message();
    if (response.applied()) {
      applied++;
      EXPECT_EQ(client, winning_client);
    } else {
      EXPECT_NE(client, winning_client);
      EXPECT_EQ(ValueOf(response), winner);  // the current row comes back
    }
  }
  EXPECT_LE(applied, 1);
  EXPECT_GE(Metric("cas_write_condition_not_met"), 1u);
}

TEST_F(LwtTest, SerialReadsOfOnePartitionShareARoundInsteadOfDuelling) {
  ASSERT_TRUE(Call(IfNotExists("shared", "a")).applied());
  simulator_.RunUntil(simulator_.now() + 50 * kMillisecond);
  const uint64_t operations = Metric("cas_total_operations");
  const uint64_t lost_rounds = Metric("cas_write_contention");
  std::vector<uint64_t> ids;
  for (size_t client = 0; client < 8; client++) ids.push_back(Send(Read("shared", CL_SERIAL), 1, client));
  simulator_.RunUntil(simulator_.now() + 1 * kSecond);
  for (uint64_t id : ids) {
    ASSERT_TRUE(responses_.count(id));
    ASSERT_EQ(responses_[id].code(), ClientResponse::OK) << responses_[id].message();
    EXPECT_EQ(ValueOf(responses_[id]), "a");
  }
  // The first read starts a round at once and the other seven share the
  // next one: no ballot duels, and each read still counts as an operation.
  EXPECT_EQ(Metric("cas_write_contention"), lost_rounds);
  EXPECT_EQ(Metric("cas_total_operations"), operations + 8);
  EXPECT_LE(responses_[ids.back()].round_trips(), 1u);
}

TEST_F(LwtTest, LateConditionalWriteJoinsTheRoundGatheringPromises) {
  const TwoWrites writes = TwoWritesApart("join", "0", "0");
  const ClientResponse& a = writes.first;
  const ClientResponse& b = writes.second;
  EXPECT_EQ(writes.joined_late, 1u);
  // Both decided by one accept: one applied, the other shown its row.
  ASSERT_NE(a.applied(), b.applied());
  const ClientResponse& lost = a.applied() ? b : a;
  EXPECT_EQ(ValueOf(lost), a.applied() ? "1" : "2");
  EXPECT_EQ(a.round_trips(), 2u);  // one prepare, one accept, for both
  EXPECT_EQ(b.round_trips(), 2u);
}

// A round where no condition holds has no accept: its answers rest on what
// the promises read, which may predate a write that joined late. The
// writes that were there before the prepare are answered; the late one
// runs a prepare of its own.
TEST_F(LwtTest, LateWriteInARoundWithNoAcceptGetsAPrepareOfItsOwn) {
  const TwoWrites writes = TwoWritesApart("stale", "5", "0");
  EXPECT_EQ(writes.joined_late, 1u);
  for (const ClientResponse* answer : {&writes.first, &writes.second}) {
    EXPECT_FALSE(answer->applied());
    EXPECT_EQ(ValueOf(*answer), "5");
  }
  EXPECT_EQ(std::multiset<uint32_t>({writes.first.round_trips(), writes.second.round_trips()}),
            (std::multiset<uint32_t>{1, 2}));
}

// Clients that send a failing write again as soon as it is answered keep
// arriving while rounds gather promises. Writes join only a proposer's
// first round, so no proposer runs on, round after round, towards the
// timeout that would answer everyone in it with WRITE_TIMEOUT.
TEST_F(LwtTest, ClientsRetryingAFailingWriteDoNotKeepOneProposerGoing) {
  ASSERT_TRUE(Call(IfNotExists("held", "taken")).applied());
  simulator_.RunUntil(simulator_.now() + 50 * kMillisecond);
  const uint64_t joined = Metric("cas_write_joined_late");
  constexpr size_t kClients = 4;
  std::vector<uint64_t> waiting;
  for (size_t client = 0; client < kClients; client++) {
    waiting.push_back(Send(If("held", Condition::EQ, "free", "mine"), 1, client));
  }
  size_t answered = 0, timed_out = 0;
  uint32_t most_round_trips = 0;
  const Nanos until = simulator_.now() + 5 * kSecond;
  while (simulator_.now() < until) {
    simulator_.RunUntil(simulator_.now() + 50 * kMicrosecond);
    for (size_t client = 0; client < kClients; client++) {
      auto it = responses_.find(waiting[client]);
      if (it == responses_.end()) continue;
      if (it->second.code() == ClientResponse::WRITE_TIMEOUT) {
        timed_out++;
      } else {
        EXPECT_EQ(it->second.code(), ClientResponse::OK) << it->second.message();
        EXPECT_FALSE(it->second.applied());
      }
      most_round_trips = std::max(most_round_trips, it->second.round_trips());
      answered++;
      waiting[client] = Send(If("held", Condition::EQ, "free", "mine"), 1, client);
    }
  }
  EXPECT_EQ(timed_out, 0u);
  EXPECT_GT(answered, 1000u);
  // A first round and one more for the late writes (one more again if a
  // ballot must rise above the latest commit). When late writes could
  // join every round, one proposer ran 45 rounds here, each answering the
  // last one's late writes and taking new ones.
  EXPECT_LE(most_round_trips, 3u);
  EXPECT_GT(Metric("cas_write_joined_late"), joined);  // writes did join rounds
}

// Node 1's accept reaches replica 2 twice: the first copy is accepted (its
// answer is lost), the second comes after node 3's higher prepare and is
// refused; the accept to replica 1 also comes after it. Every answer node 1
// hears is a refusal, yet replica 2 accepted its value, and node 3's round
// finishes that value. A refusal does not prove an earlier copy was not
// accepted: node 1 must learn its value's fate, not evaluate again (which
// told the client "not applied" of a value that was written).
TEST_F(LwtTest, AnAcceptRefusedAfterADuplicateWasAcceptedLeavesTheValueUncertain) {
  std::optional<uint64_t> first_accept;
  int answers_from_2 = 0;
  cluster_.network().set_tap([&](const Envelope& m) -> std::optional<std::vector<Nanos>> {
    using Copies = std::vector<Nanos>;
    const NodeId from = m.from_node(), to = m.to_node();
    if (m.has_paxos_prepare() && from == 1 && to == 3) return Copies{};  // node 1's quorum: 1 and 2
    if (m.has_paxos_promise() && from == 1 && to == 3) return Copies{20 * kMillisecond};  // node 3's: 3 and 2
    if (m.has_paxos_accept() && from == 1 && first_accept.value_or(m.paxos_accept().request_id()) ==
                                                 m.paxos_accept().request_id()) {
      first_accept = m.paxos_accept().request_id();
      return to == 2 ? Copies{0, 30 * kMillisecond} : Copies{30 * kMillisecond};
    }
    if (m.has_paxos_accept_reply() && from == 2 && to == 1 && first_accept &&
        m.paxos_accept_reply().request_id() == *first_accept) {
      if (answers_from_2++ == 0) return Copies{};  // the first copy's answer is lost
    }
    return std::nullopt;
  });
  const uint64_t a = Send(IfNotExists("dup", "a"), 1);
  for (int i = 0; i < 1000 && !first_accept; i++) simulator_.RunUntil(simulator_.now() + 10 * kMicrosecond);
  ASSERT_TRUE(first_accept.has_value());
  simulator_.RunUntil(simulator_.now() + 1 * kMillisecond);
  const ClientResponse b = Call(IfNotExists("dup", "b"), 3);
  simulator_.RunUntil(simulator_.now() + 1 * kSecond);
  EXPECT_EQ(answers_from_2, 2);  // both copies were answered
  ASSERT_EQ(b.code(), ClientResponse::OK) << b.message();
  EXPECT_FALSE(b.applied());  // node 3 finished "a" first
  const ClientResponse read = Call(Read("dup", CL_SERIAL), 2);
  ASSERT_EQ(ValueOf(read), "a");
  ASSERT_TRUE(responses_.count(a));
  EXPECT_EQ(responses_[a].code(), ClientResponse::OK) << responses_[a].message();
  EXPECT_TRUE(responses_[a].applied());
}

TEST_F(LwtTest, ConditionsOnColumnValues) {
  Call(IfNotExists("k", "5"));
  EXPECT_TRUE(Call(If("k", Condition::EQ, "5", "6")).applied());
  const ClientResponse stale = Call(If("k", Condition::EQ, "5", "7"));
  EXPECT_FALSE(stale.applied());
  EXPECT_EQ(ValueOf(stale), "6");
  EXPECT_TRUE(Call(If("k", Condition::NE, "5", "7")).applied());
  EXPECT_FALSE(Call(If("k", Condition::LT, "7", "8")).applied());
  EXPECT_TRUE(Call(If("k", Condition::GT, "6", "8")).applied());
  EXPECT_FALSE(Call(If("absent", Condition::EQ, "x", "y")).applied());
  EXPECT_TRUE(Call(If("absent", Condition::NE, "x", "y")).applied());
  simulator_.RunUntil(simulator_.now() + 50 * kMillisecond);
  EXPECT_EQ(ValueOf(Call(Read("k", CL_QUORUM))), "8");
}

TEST_F(LwtTest, IfExistsForUpdatesAndDeletes) {
  ClientRequest update = IfNotExists("k", "x");
  update.mutable_cas()->mutable_statement(0)->set_if_not_exists(false);
  update.mutable_cas()->mutable_statement(0)->set_if_exists(true);
  EXPECT_FALSE(Call(update).applied());
  Call(IfNotExists("k", "x"));
  ClientRequest remove;
  CasStatement* statement = remove.mutable_cas()->add_statement();
  statement->mutable_write()->set_table("t");
  statement->mutable_write()->set_partition_key("k");
  statement->mutable_write()->set_delete_row(true);
  statement->set_if_exists(true);
  EXPECT_TRUE(Call(remove).applied());
  EXPECT_FALSE(Call(remove).applied());
  EXPECT_EQ(ValueOf(Call(Read("k", CL_SERIAL))), "");
}

TEST_F(LwtTest, BatchesOnOnePartitionApplyTogether) {
  ClientRequest batch;
  CasStatement* first = batch.mutable_cas()->add_statement();
  *first = Statement("p", "1");
  first->mutable_write()->set_clustering_key("a");
  first->set_if_not_exists(true);
  CasStatement* second = batch.mutable_cas()->add_statement();
  *second = Statement("p", "2");
  second->mutable_write()->set_clustering_key("b");
  second->set_if_not_exists(true);
  EXPECT_TRUE(Call(batch).applied());
  EXPECT_FALSE(Call(batch).applied());
  ClientRequest range = Read("p", CL_SERIAL);
  range.mutable_read()->set_range(true);
  EXPECT_EQ(Call(range).rows_size(), 2);
}

TEST_F(LwtTest, BadConditionalWritesAreRejectedBeforeAnythingIsSent) {
  auto rejected = [&](ClientRequest request, const std::string& why) {
    const ClientResponse response = Call(request);
    EXPECT_EQ(response.code(), ClientResponse::INVALID_REQUEST);
    EXPECT_NE(response.message().find(why), std::string::npos) << response.message();
  };
  ClientRequest across = IfNotExists("a", "1");
  *across.mutable_cas()->add_statement() = Statement("b", "2");
  rejected(across, "must stay in one partition");
  ClientRequest serial_as_quorum = IfNotExists("a", "1");
  serial_as_quorum.mutable_cas()->set_serial_consistency(CL_QUORUM);
  rejected(serial_as_quorum, "QUORUM is not a serial consistency level");
  ClientRequest commit_as_serial = IfNotExists("a", "1");
  commit_as_serial.mutable_cas()->set_commit_consistency(CL_SERIAL);
  rejected(commit_as_serial, "SERIAL is not a commit consistency level");
  EXPECT_EQ(Metric("cas_total_operations"), 0u);
}

TEST_F(LwtTest, AReplicaWhoseDiskFailedACommitIsRepairedNotFooled) {
  // Node 3's disk fails writes: it can neither accept nor commit "v".
  cluster_.FailDisk(3, DiskFaults{false, true, 0}, 300 * kMillisecond);
  ASSERT_TRUE(Call(IfNotExists("k", "v")).applied());
  simulator_.RunUntil(simulator_.now() + 400 * kMillisecond);  // the disk is back
  // A serial read through nodes 2 and 3 only: node 3 must not claim a
  // commit its disk never took; the round repairs it instead.
  cluster_.Partition({1}, {2, 3}, /*one_way=*/false);
  simulator_.RunUntil(simulator_.now() + 1500 * kMillisecond);  // node 1 convicted
  EXPECT_EQ(ValueOf(Call(Read("k", CL_SERIAL), 3)), "v");
  cluster_.Heal();
  cluster_.Partition({3}, {1, 2}, /*one_way=*/false);
  simulator_.RunUntil(simulator_.now() + 1500 * kMillisecond);
  // Node 3 alone: its own table holds the value now.
  EXPECT_EQ(ValueOf(Call(Read("k", CL_ONE), 3)), "v");
}

TEST_F(LwtTest, ACommitDurableOnAQuorumIsPrunedButItsOriginRemembered) {
  const ClientResponse written = Call(IfNotExists("k", "v"));
  ASSERT_TRUE(written.applied());
  simulator_.RunUntil(simulator_.now() + 50 * kMillisecond);  // commit, then prune
  EXPECT_EQ(Metric("cas_prune"), 1u);
  for (NodeId node = 1; node <= 3; node++) {
    const PaxosState state = StateOn(node, "k");
    ASSERT_TRUE(state.has_committed()) << "node " << node;
    EXPECT_TRUE(state.committed().pruned()) << "node " << node;
    EXPECT_EQ(state.committed().mutation().rows_size(), 0) << "node " << node;
    ASSERT_EQ(state.recent_commit_origins_size(), 1) << "node " << node;
    EXPECT_EQ(state.recent_commit_origins(0).micros(), state.committed().origin().micros());
    EXPECT_TRUE(state.has_promised());  // a promise is never forgotten
  }
  // The value itself is in every table.
  for (NodeId node = 1; node <= 3; node++) {
    EXPECT_EQ(ValueOf(Call(Read("k", CL_ONE), node)), "v") << "node " << node;
  }
}

TEST_F(LwtTest, ANewerCommitIsNotPrunedByAnOlderBallot) {
  ASSERT_TRUE(Call(IfNotExists("k", "a")).applied());
  simulator_.RunUntil(simulator_.now() + 50 * kMillisecond);
  const Ballot first = StateOn(1, "k").committed().ballot();
  cluster_.Partition({1}, {2, 3}, /*one_way=*/false);
  simulator_.RunUntil(simulator_.now() + 1500 * kMillisecond);  // node 1 convicted
  Send(If("k", Condition::EQ, "a", "b"), 2);
  // As soon as node 3 holds the new commit, cut node 2 off from it, so
  // node 2's own prune never arrives.
  for (int i = 0; i < 10000 && StateOn(3, "k").committed().ballot().micros() == first.micros(); i++) {
    simulator_.RunUntil(simulator_.now() + 10 * kMicrosecond);
  }
  cluster_.Partition({2}, {3}, /*one_way=*/true);
  auto prune_on_3 = [&](const Ballot& ballot) {
    Envelope message;
    message.mutable_paxos_prune()->set_table("t");
    message.mutable_paxos_prune()->set_partition_key("k");
    *message.mutable_paxos_prune()->mutable_ballot() = ballot;
    cluster_.network().Send(Address{clients_[0], 0}, Address{3, ShardOf(TokenOf("k"), 2)},
                            std::move(message));
    simulator_.RunUntil(simulator_.now() + 50 * kMillisecond);
  };
  prune_on_3(first);
  PaxosState third = StateOn(3, "k");
  ASSERT_FALSE(BallotEqual(third.committed().ballot(), first));
  EXPECT_FALSE(third.committed().pruned());
  EXPECT_EQ(third.committed().mutation().rows_size(), 1);
  EXPECT_EQ(third.recent_commit_origins_size(), 2);
  prune_on_3(third.committed().ballot());
  EXPECT_TRUE(StateOn(3, "k").committed().pruned());
}

TEST_F(LwtTest, AnAcknowledgedLwtIsVisibleToQuorumReadsEvenBeforeItsCommit) {
  // Node 1 coordinates; its commit messages to 2 and 3 are held back, so
  // those replicas have only accepted the value when the client reads.
  const uint64_t id = Send(IfNotExists("k", "v"));
  simulator_.RunUntil(simulator_.now() + 1 * kMillisecond);  // the promises are in
  cluster_.Clog(1, 200 * kMillisecond);
  simulator_.RunUntil(simulator_.now() + 300 * kMillisecond);
  ASSERT_TRUE(responses_.count(id));
  ASSERT_TRUE(responses_[id].applied());
  const ClientResponse read = Call(Read("k", CL_QUORUM), 2);
  EXPECT_EQ(ValueOf(read), "v");
}

TEST_F(LwtTest, APromiseSentRightBeforeAPowerCutIsStillKeptAfterRestart) {
  CrashPoint point;
  point.point = scenario::CrashPointFault::AFTER_REPLY;
  point.reply = Envelope::kPaxosPromise;
  point.kind = CrashKind::kPowerCut;
  cluster_.ArmCrashPoint(2, std::move(point));
  ASSERT_TRUE(Call(IfNotExists("k", "v")).applied());  // nodes 1 and 3 are a quorum
  ASSERT_FALSE(cluster_.node(2).running()) << "the crash point never fired";
  cluster_.Restart(2);
  // The first promise of a life raises the promise horizon, so it was
  // synced before it was sent and the power cut kept it. (Promises kept in
  // memory below the horizon are lost by such a cut and covered by the
  // next life's floor: tests/acceptor_test, scenarios/lwt_promise_crashes.)
  EXPECT_GT(StateOn(2, "k").promised().micros(), 0);
}

TEST_F(LwtTest, AQuorumThatLosesPowerRightAfterAcceptingStillKnowsTheValue) {
  // Node 1 coordinates but its disk refuses everything: the quorum is 2, 3.
  cluster_.FailDisk(1, DiskFaults{false, true, 0}, 2 * kSecond);
  for (NodeId node : {2, 3}) {
    CrashPoint point;
    point.point = scenario::CrashPointFault::AFTER_REPLY;
    point.reply = Envelope::kPaxosAcceptReply;
    point.kind = CrashKind::kPowerCut;
    cluster_.ArmCrashPoint(node, std::move(point));
  }
  const uint64_t id = Send(IfNotExists("k", "v"));
  simulator_.RunUntil(simulator_.now() + 3 * kSecond);
  ASSERT_FALSE(cluster_.node(2).running());
  ASSERT_FALSE(cluster_.node(3).running());
  // Node 1 goes too: only the accepts on nodes 2 and 3 remain.
  cluster_.Crash(1, CrashKind::kPowerCut);
  cluster_.Restart(2);
  cluster_.Restart(3);
  simulator_.RunUntil(simulator_.now() + 1500 * kMillisecond);  // node 1 convicted
  const ClientResponse read = Call(Read("k", CL_SERIAL), 2);
  ASSERT_EQ(read.code(), ClientResponse::OK) << read.message();
  // Accepted by a quorum: chosen, so every later round must find it.
  EXPECT_EQ(ValueOf(read), "v");
  if (responses_.count(id)) {
    EXPECT_NE(responses_[id].code(), ClientResponse::UNAVAILABLE);
  }
}

TEST_F(LwtTest, CorruptPaxosStateOnOneReplicaIsRefusedNotFatal) {
  // Field 1 with wire type 7: no parser accepts it.
  WriteBatch garbage;
  garbage.Put(storage_codec::PaxosKey("t", "k"), std::string("\x0f\x01", 2));
  cluster_.node(2).storage(ShardOf(TokenOf("k"), 2)).Apply(std::move(garbage), Durability::kSynced,
                                                            [](absl::Status) {});
  simulator_.RunUntil(simulator_.now() + 10 * kMillisecond);
  ASSERT_TRUE(Call(IfNotExists("k", "v")).applied());  // nodes 1 and 3 decide
  EXPECT_TRUE(cluster_.node(2).running());
  EXPECT_EQ(ValueOf(Call(Read("k", CL_SERIAL), 3)), "v");
}

}  // namespace
}  // namespace charybdis::sim
