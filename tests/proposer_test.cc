// One Proposer, stepped one message at a time with no cluster around it: each
// test is a short story of promises, accept replies and commit acks, and
// reads what the proposer wanted sent and answered from its outbox
// (core/paxos/proposer.h). Replicas 1, 2 and 3; a quorum is 2.

#include "core/paxos/proposer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/paxos/ballot.h"
#include "tests/fake_env.h"

namespace charybdis {
namespace {

using Kind = ProposerEffect::Kind;

CasOp Conditional(const std::string& row, const std::string& value) {
  CasOp op;
  CasStatement* statement = op.add_statement();
  WriteOp* write = statement->mutable_write();
  write->set_table("kv");
  write->set_partition_key("p");
  write->set_clustering_key(row);
  ColumnValue* put = write->add_put();
  put->set_column("v");
  put->set_value(value);
  return op;
}

CasOp IfNotExists(const std::string& row, const std::string& value) {
  CasOp op = Conditional(row, value);
  op.mutable_statement(0)->set_if_not_exists(true);
  return op;
}

// A replica's view of partition p: row -> value of column v, written at `micros`.
PartitionData Rows(const std::map<std::string, std::string>& values, Timestamp micros = 1000) {
  Partition partition;
  for (const auto& [row, value] : values) partition.rows[row].cells["v"] = Cell{micros, false, value, 0, 0};
  PartitionData data;
  data.set_table("kv");
  data.set_partition_key("p");
  partition.ToProto(&data);
  return data;
}

Ballot At(int64_t micros, uint64_t unique = 1) {
  Ballot ballot;
  ballot.set_micros(micros);
  ballot.set_unique(unique);
  return ballot;
}

Proposal ProposalOf(const Ballot& ballot, const PartitionData& mutation, const Ballot* origin = nullptr) {
  Proposal proposal;
  *proposal.mutable_ballot() = ballot;
  *proposal.mutable_mutation() = mutation;
  if (origin != nullptr) *proposal.mutable_origin() = *origin;
  return proposal;
}

class ProposerTest : public ::testing::Test {
 protected:
  ProposerTest() : ballots_(Address{9, 0}, 5) { liveness_.Update({1, 2, 3}, 0); }

  // A proposer for the writes of `batch` (a serial read of row "a" when empty).
  Proposer& Make(std::vector<CasOp> batch, size_t readers = 1) {
    ReadOp read;
    read.set_table("kv");
    read.set_partition_key("p");
    read.set_clustering_key("a");
    return Make(std::move(batch), read, readers);
  }
  // A proposer for a serial read of `read`.
  Proposer& MakeRead(const ReadOp& read) { return Make({}, read, 1); }
  Proposer& Make(std::vector<CasOp> batch, const ReadOp& read, size_t readers) {
    Proposer::Request request;
    request.table = "kv";
    request.partition_key = "p";
    request.replicas = {1, 2, 3};
    request.participants = {1, 2, 3};
    request.quorum = 2;
    request.read = read;
    const size_t clients = batch.empty() ? readers : batch.size();
    request.batch = std::move(batch);
    ProposerView view{&clock_, &liveness_, &ballots_, [this] { return ++last_id_; }, &metrics_, &probes_};
    proposer_ = std::make_unique<Proposer>(std::move(view), std::move(request), clients);
    return *proposer_;
  }

  // Steps the proposer's start and returns its prepares, by replica.
  std::map<NodeId, PaxosPrepare> Start() {
    proposer_->Start();
    return Prepares();
  }
  std::map<NodeId, PaxosPrepare> Prepares() {
    std::map<NodeId, PaxosPrepare> prepares;
    for (const ProposerEffect& effect : Take()) {
      if (effect.kind == Kind::kSend && effect.message.has_paxos_prepare()) {
        prepares[effect.to] = effect.message.paxos_prepare();
      }
    }
    return prepares;
  }
  // The outbox since the last look, kept for the helpers below.
  std::vector<ProposerEffect>& Take() {
    effects_ = proposer_->TakeOutbox();
    return effects_;
  }
  std::vector<ProposerEffect> Of(Kind kind) const {
    std::vector<ProposerEffect> found;
    for (const ProposerEffect& effect : effects_) {
      if (effect.kind == kind) found.push_back(effect);
    }
    return found;
  }
  std::map<NodeId, Envelope> Sent(Envelope::BodyCase body) const {
    std::map<NodeId, Envelope> sent;
    for (const ProposerEffect& effect : Of(Kind::kSend)) {
      if (effect.message.body_case() == body) sent[effect.to] = effect.message;
    }
    return sent;
  }

  PaxosPromise Promise(const PaxosPrepare& prepare, const PartitionData& data = PartitionData()) {
    PaxosPromise promise;
    promise.set_request_id(prepare.request_id());
    promise.set_ok(true);
    promise.set_promised(true);
    *promise.mutable_promised_ballot() = prepare.ballot();
    *promise.mutable_data() = data;
    return promise;
  }
  PaxosPromise Refusal(const PaxosPrepare& prepare, const Ballot& higher) {
    PaxosPromise refusal;
    refusal.set_request_id(prepare.request_id());
    refusal.set_ok(true);
    refusal.set_promised(false);
    *refusal.mutable_promised_ballot() = higher;
    return refusal;
  }
  PaxosAcceptReply Accepted(const Envelope& accept, bool accepted = true) {
    PaxosAcceptReply reply;
    reply.set_request_id(accept.paxos_accept().request_id());
    reply.set_ok(true);
    reply.set_accepted(accepted);
    if (!accepted) *reply.mutable_promised_ballot() = At(accept.paxos_accept().proposal().ballot().micros() + 50);
    return reply;
  }
  PaxosCommitAck CommitAck(const Envelope& commit) {
    PaxosCommitAck ack;
    ack.set_request_id(commit.paxos_commit().request_id());
    ack.set_ok(true);
    return ack;
  }

  // Promises from 1 and 2, the accept sent to both; returns the accepts.
  std::map<NodeId, Envelope> PromiseAndPropose(const std::map<NodeId, PaxosPrepare>& prepares,
                                               const PartitionData& data = PartitionData()) {
    proposer_->OnPromise(1, Promise(prepares.at(1), data));
    proposer_->OnPromise(2, Promise(prepares.at(2), data));
    Take();
    return Sent(Envelope::kPaxosAccept);
  }

  // A first round whose accept only replica 1 took: our value is uncertain.
  // Returns the accepted proposal; the proposer is backing off.
  Proposal PartialAccept(std::map<NodeId, PaxosPrepare> prepares) {
    auto accepts = PromiseAndPropose(prepares);
    EXPECT_EQ(accepts.size(), 2u);
    proposer_->OnAcceptReply(1, Accepted(accepts.at(1)));
    proposer_->OnAcceptReply(2, Accepted(accepts.at(2), /*accepted=*/false));
    Take();
    EXPECT_EQ(Of(Kind::kBackOff).size(), 1u);
    EXPECT_TRUE(Of(Kind::kReply).empty());
    EXPECT_TRUE(probes_.Saw("paxos.partial_accept"));
    return accepts.at(1).paxos_accept().proposal();
  }

  testing::ManualClock clock_;
  LivenessView liveness_{0};
  BallotClock ballots_;
  ShardMetrics metrics_;
  testing::CountingProbes probes_;
  uint64_t last_id_ = 100;
  std::unique_ptr<Proposer> proposer_;
  std::vector<ProposerEffect> effects_;
};

TEST_F(ProposerTest, AnUncontendedWriteIsAnsweredAfterTwoRoundTripsThenCommittedAndPruned) {
  Make({IfNotExists("a", "x")});
  auto prepares = Start();
  ASSERT_EQ(prepares.size(), 3u);  // every live participant
  EXPECT_EQ(prepares.at(1).read_rows_size(), 1);  // only the row the condition reads
  auto accepts = PromiseAndPropose(prepares);
  ASSERT_EQ(accepts.size(), 2u);  // the promisers only
  EXPECT_TRUE(Of(Kind::kReply).empty());

  proposer_->OnAcceptReply(1, Accepted(accepts.at(1)));
  EXPECT_TRUE(proposer_->TakeOutbox().empty());  // one accept is not a quorum
  proposer_->OnAcceptReply(2, Accepted(accepts.at(2)));
  Take();
  ASSERT_EQ(Of(Kind::kReply).size(), 1u);
  const ClientResponse answer = Of(Kind::kReply)[0].response;
  EXPECT_TRUE(answer.applied());
  EXPECT_EQ(answer.round_trips(), 2u);
  EXPECT_EQ(answer.write_timestamp(), accepts.at(1).paxos_accept().proposal().ballot().micros());
  EXPECT_EQ(Of(Kind::kAnswered).size(), 1u);
  auto commits = Sent(Envelope::kPaxosCommit);
  EXPECT_EQ(commits.size(), 3u);  // every live replica, after the answer
  EXPECT_TRUE(Of(Kind::kDone).empty());  // the commit is still to see through

  proposer_->OnCommitAck(1, CommitAck(commits.at(1)));
  proposer_->OnCommitAck(3, CommitAck(commits.at(3)));
  Take();
  ASSERT_EQ(Of(Kind::kPrune).size(), 1u);
  EXPECT_EQ(Of(Kind::kPrune)[0].prunes.size(), 3u);
  ASSERT_EQ(Of(Kind::kDone).size(), 1u);
  EXPECT_EQ(Of(Kind::kDone)[0].ids.size(), 3u);  // prepare, accept, commit
  EXPECT_TRUE(proposer_->done());
}

TEST_F(ProposerTest, AConditionThatFailsIsAnsweredWithTheRowAndProposesNothing) {
  Make({IfNotExists("a", "x")});
  auto prepares = Start();
  const PartitionData existing = Rows({{"a", "old"}});
  proposer_->OnPromise(1, Promise(prepares.at(1), existing));
  proposer_->OnPromise(3, Promise(prepares.at(3), existing));
  Take();
  EXPECT_TRUE(Sent(Envelope::kPaxosAccept).empty());
  ASSERT_EQ(Of(Kind::kReply).size(), 1u);
  const ClientResponse answer = Of(Kind::kReply)[0].response;
  EXPECT_FALSE(answer.applied());
  ASSERT_EQ(answer.rows_size(), 1);
  EXPECT_EQ(answer.round_trips(), 1u);
  EXPECT_EQ(Of(Kind::kDone).size(), 1u);
  EXPECT_EQ(metrics_.cas_write_condition_not_met, 1u);
}

TEST_F(ProposerTest, ASerialReadIsAnsweredAfterOneRoundTripForEveryReader) {
  Make({}, /*readers=*/2);
  auto prepares = Start();
  proposer_->OnPromise(2, Promise(prepares.at(2), Rows({{"a", "x"}})));
  proposer_->OnPromise(3, Promise(prepares.at(3), Rows({{"a", "x"}, {"b", "y"}})));
  Take();
  EXPECT_TRUE(Sent(Envelope::kPaxosAccept).empty());
  const auto replies = Of(Kind::kReply);
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies[0].client, 0u);
  EXPECT_EQ(replies[1].client, 1u);
  ASSERT_EQ(replies[0].response.rows_size(), 1);  // row a only
  EXPECT_EQ(replies[0].response.round_trips(), 1u);
  EXPECT_EQ(Of(Kind::kDone).size(), 1u);
}

TEST_F(ProposerTest, ASerialRangeReadAnswersOnlyTheRowsInsideItsBounds) {
  ReadOp range;
  range.set_table("kv");
  range.set_partition_key("p");
  range.set_range(true);
  range.set_start("b");
  range.set_end("d");
  MakeRead(range);
  auto prepares = Start();
  EXPECT_EQ(prepares.at(1).read_rows_size(), 0);  // a range reads the partition
  const PartitionData rows = Rows({{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"}});
  proposer_->OnPromise(1, Promise(prepares.at(1), rows));
  proposer_->OnPromise(2, Promise(prepares.at(2), rows));
  Take();
  ASSERT_EQ(Of(Kind::kReply).size(), 1u);
  const ClientResponse answer = Of(Kind::kReply)[0].response;
  ASSERT_EQ(answer.rows_size(), 2);  // b and c: the start is in, the end out
}

TEST_F(ProposerTest, ADuplicatePromiseCountsOnce) {
  Make({IfNotExists("a", "x")});
  auto prepares = Start();
  proposer_->OnPromise(1, Promise(prepares.at(1)));
  proposer_->OnPromise(1, Promise(prepares.at(1)));
  Take();
  EXPECT_TRUE(Sent(Envelope::kPaxosAccept).empty());  // still one promise of two
  proposer_->OnPromise(2, Promise(prepares.at(2)));
  Take();
  EXPECT_EQ(Sent(Envelope::kPaxosAccept).size(), 2u);
}

TEST_F(ProposerTest, RefusalsThatPutAQuorumOutOfReachBackOffAndRetryAboveTheHigherBallot) {
  Make({IfNotExists("a", "x")});
  auto prepares = Start();
  const Ballot higher = At(prepares.at(1).ballot().micros() + 1'000'000, 77);
  proposer_->OnPromise(1, Refusal(prepares.at(1), higher));
  EXPECT_TRUE(proposer_->TakeOutbox().empty());  // 2 and 3 may still promise
  proposer_->OnPromise(2, Refusal(prepares.at(2), higher));
  Take();
  ASSERT_EQ(Of(Kind::kBackOff).size(), 1u);
  EXPECT_GT(Of(Kind::kBackOff)[0].backoff_ceiling, 0);
  EXPECT_EQ(metrics_.cas_write_contention, 1u);
  // A promise of the old round after the back-off started is ignored.
  proposer_->OnPromise(3, Promise(prepares.at(3)));
  EXPECT_TRUE(proposer_->TakeOutbox().empty());

  proposer_->Retry();
  auto again = Prepares();
  ASSERT_EQ(again.size(), 3u);
  EXPECT_TRUE(BallotLess(higher, again.at(1).ballot()));
  EXPECT_NE(again.at(1).request_id(), prepares.at(1).request_id());
}

TEST_F(ProposerTest, AnAcceptedValueOfAnotherRoundIsFinishedBeforeOurOwn) {
  Make({IfNotExists("a", "x")});
  auto prepares = Start();
  const Ballot theirs = At(prepares.at(1).ballot().micros() - 10, 42);
  PaxosPromise holding = Promise(prepares.at(1));
  *holding.mutable_accepted() = ProposalOf(theirs, Rows({{"a", "theirs"}}));
  proposer_->OnPromise(1, holding);
  proposer_->OnPromise(2, Promise(prepares.at(2)));
  Take();
  EXPECT_TRUE(probes_.Saw("paxos.finish_in_progress_round"));
  auto accepts = Sent(Envelope::kPaxosAccept);
  ASSERT_EQ(accepts.size(), 2u);
  const Proposal& finishing = accepts.at(1).paxos_accept().proposal();
  EXPECT_TRUE(BallotEqual(finishing.origin(), theirs));  // their value, under our ballot
  EXPECT_EQ(finishing.mutation().rows(0).cells(0).value(), "theirs");

  proposer_->OnAcceptReply(1, Accepted(accepts.at(1)));
  proposer_->OnAcceptReply(2, Accepted(accepts.at(2)));
  Take();
  EXPECT_TRUE(Of(Kind::kReply).empty());  // our own write has not run yet
  auto commits = Sent(Envelope::kPaxosCommit);
  proposer_->OnCommitAck(1, CommitAck(commits.at(1)));
  proposer_->OnCommitAck(2, CommitAck(commits.at(2)));
  auto own_round = Prepares();
  ASSERT_EQ(own_round.size(), 3u);
  EXPECT_TRUE(BallotLess(finishing.ballot(), own_round.at(1).ballot()));
}

TEST_F(ProposerTest, AReplicaMissingTheLatestCommitGetsItBeforeTheRoundReadsThroughIt) {
  Make({IfNotExists("b", "x")});
  auto prepares = Start();
  const Ballot committed = At(prepares.at(1).ballot().micros() - 10, 42);
  PaxosPromise up_to_date = Promise(prepares.at(1), Rows({{"a", "old"}}));
  *up_to_date.mutable_committed() = ProposalOf(committed, Rows({{"a", "old"}}));
  proposer_->OnPromise(1, up_to_date);
  proposer_->OnPromise(2, Promise(prepares.at(2)));
  Take();
  EXPECT_TRUE(probes_.Saw("paxos.repair_missing_commit"));
  auto repairs = Sent(Envelope::kPaxosCommit);
  ASSERT_EQ(repairs.size(), 1u);
  ASSERT_EQ(repairs.count(2), 1u);
  EXPECT_TRUE(Sent(Envelope::kPaxosAccept).empty());

  proposer_->OnCommitAck(2, CommitAck(repairs.at(2)));
  Take();
  EXPECT_EQ(Sent(Envelope::kPaxosAccept).size(), 2u);  // read again, then proposed
}

TEST_F(ProposerTest, AnAcceptEveryReplicaRefusedStillLeavesOurValueUncertain) {
  Make({IfNotExists("a", "x")});
  auto accepts = PromiseAndPropose(Start());
  // Each refusal answers one copy of the accept; an earlier copy (a
  // duplicate on the network) may have been accepted, its answer lost.
  proposer_->OnAcceptReply(1, Accepted(accepts.at(1), /*accepted=*/false));
  proposer_->OnAcceptReply(2, Accepted(accepts.at(2), /*accepted=*/false));
  Take();
  EXPECT_EQ(Of(Kind::kBackOff).size(), 1u);
  EXPECT_FALSE(probes_.Saw("paxos.partial_accept"));
  proposer_->Retry();
  auto prepares = Prepares();
  ASSERT_TRUE(prepares.at(1).has_uncertain_origin());  // its fate is asked, not assumed
  EXPECT_TRUE(BallotEqual(prepares.at(1).uncertain_origin(), accepts.at(1).paxos_accept().proposal().origin()));
}

TEST_F(ProposerTest, AfterAPartialAcceptTheNextRoundLearnsOurValueWasCommitted) {
  Make({IfNotExists("a", "x")});
  const Proposal ours = PartialAccept(Start());
  proposer_->Retry();
  auto prepares = Prepares();
  ASSERT_TRUE(prepares.at(1).has_uncertain_origin());  // the question rides on the prepare
  EXPECT_TRUE(BallotEqual(prepares.at(1).uncertain_origin(), ours.origin()));

  PaxosPromise knows = Promise(prepares.at(1));
  knows.set_origin_fate(PaxosPromise::ORIGIN_COMMITTED);
  proposer_->OnPromise(1, knows);
  proposer_->OnPromise(2, Promise(prepares.at(2)));
  Take();
  EXPECT_TRUE(probes_.Saw("paxos.fate.committed"));
  ASSERT_EQ(Of(Kind::kReply).size(), 1u);
  EXPECT_TRUE(Of(Kind::kReply)[0].response.applied());
  EXPECT_TRUE(Sent(Envelope::kPaxosAccept).empty());  // not proposed twice
}

TEST_F(ProposerTest, AfterAPartialAcceptAValueNotChosenWithNothingDecidedSinceIsProposedAgain) {
  Make({IfNotExists("a", "x")});
  const Proposal ours = PartialAccept(Start());
  proposer_->Retry();
  auto prepares = Prepares();
  for (NodeId replica : {NodeId{1}, NodeId{2}}) {
    PaxosPromise promise = Promise(prepares.at(replica));
    promise.set_origin_fate(PaxosPromise::ORIGIN_NOT_COMMITTED);
    proposer_->OnPromise(replica, promise);
  }
  Take();
  EXPECT_TRUE(probes_.Saw("paxos.fate.propose_again"));
  auto accepts = Sent(Envelope::kPaxosAccept);
  ASSERT_EQ(accepts.size(), 2u);
  const Proposal& again = accepts.at(1).paxos_accept().proposal();
  EXPECT_TRUE(BallotEqual(again.origin(), ours.origin()));  // the same value, still ours
  EXPECT_EQ(again.mutation().rows(0).cells(0).value(), "x");
  EXPECT_TRUE(BallotLess(ours.ballot(), again.ballot()));
}

TEST_F(ProposerTest, AfterAPartialAcceptAValueDecidedAboveOursMakesTheRoundEvaluateAfresh) {
  Make({IfNotExists("a", "x")});
  const Proposal ours = PartialAccept(Start());
  clock_.Advance(10 * kMillisecond);  // the other value's ballot is above ours, below our next
  proposer_->Retry();
  auto prepares = Prepares();
  const Ballot above = At(ours.ballot().micros() + 1, 42);
  for (NodeId replica : {NodeId{1}, NodeId{2}}) {
    PaxosPromise promise = Promise(prepares.at(replica), Rows({{"a", "theirs"}}));
    promise.set_origin_fate(PaxosPromise::ORIGIN_NOT_COMMITTED);
    *promise.mutable_committed() = ProposalOf(above, Rows({{"a", "theirs"}}));
    proposer_->OnPromise(replica, promise);
  }
  Take();
  EXPECT_TRUE(probes_.Saw("paxos.fate.decided_above"));
  EXPECT_TRUE(Sent(Envelope::kPaxosAccept).empty());
  ASSERT_EQ(Of(Kind::kReply).size(), 1u);
  EXPECT_FALSE(Of(Kind::kReply)[0].response.applied());  // row a exists now
}

TEST_F(ProposerTest, AfterAPartialAcceptAReplicaThatForgotLeavesTheOutcomeUncertain) {
  Make({IfNotExists("a", "x")});
  PartialAccept(Start());
  proposer_->Retry();
  auto prepares = Prepares();
  PaxosPromise forgot = Promise(prepares.at(1));
  forgot.set_origin_fate(PaxosPromise::ORIGIN_FORGOTTEN);
  PaxosPromise not_committed = Promise(prepares.at(2));
  not_committed.set_origin_fate(PaxosPromise::ORIGIN_NOT_COMMITTED);
  proposer_->OnPromise(1, forgot);
  proposer_->OnPromise(2, not_committed);
  Take();
  EXPECT_TRUE(probes_.Saw("paxos.fate.unknown"));
  ASSERT_EQ(Of(Kind::kReply).size(), 1u);
  EXPECT_EQ(Of(Kind::kReply)[0].response.code(), ClientResponse::WRITE_TIMEOUT);
  EXPECT_EQ(metrics_.cas_write_timeout_due_to_uncertainty, 1u);
}

TEST_F(ProposerTest, ATimeoutWhileOurValueIsOutIsUncertainAndWhilePreparingIsNot) {
  Make({IfNotExists("a", "x")});
  auto accepts = PromiseAndPropose(Start());
  ASSERT_EQ(accepts.size(), 2u);
  proposer_->OnTimeout();
  Take();
  ASSERT_EQ(Of(Kind::kReply).size(), 1u);
  EXPECT_NE(Of(Kind::kReply)[0].response.message().find("uncertain"), std::string::npos);

  Make({IfNotExists("a", "x")});
  Start();
  proposer_->OnTimeout();
  Take();
  ASSERT_EQ(Of(Kind::kReply).size(), 1u);
  EXPECT_EQ(Of(Kind::kReply)[0].response.code(), ClientResponse::WRITE_TIMEOUT);
  EXPECT_EQ(Of(Kind::kReply)[0].response.message().find("uncertain"), std::string::npos);
  EXPECT_EQ(Of(Kind::kDone).size(), 1u);
}

TEST_F(ProposerTest, AWriteThatJoinedLateRunsAgainWhenTheRoundEndsWithoutAnAccept) {
  Make({IfNotExists("a", "x")});
  auto prepares = Start();
  const CasOp late = IfNotExists("a", "y");
  ASSERT_TRUE(proposer_->CanJoin(late));
  EXPECT_FALSE(proposer_->CanJoin(IfNotExists("z", "y")));  // a row the prepare did not read
  EXPECT_EQ(proposer_->Join(late), 1u);
  const PartitionData existing = Rows({{"a", "old"}});
  proposer_->OnPromise(1, Promise(prepares.at(1), existing));
  proposer_->OnPromise(2, Promise(prepares.at(2), existing));
  Take();
  EXPECT_TRUE(probes_.Saw("paxos.late_writes_run_again"));
  ASSERT_EQ(Of(Kind::kReply).size(), 1u);
  EXPECT_EQ(Of(Kind::kReply)[0].client, 0u);  // the early write has its answer
  EXPECT_FALSE(Of(Kind::kReply)[0].response.applied());
  EXPECT_EQ(Sent(Envelope::kPaxosPrepare).size(), 3u);  // the late one's own round
  EXPECT_FALSE(proposer_->CanJoin(IfNotExists("a", "w")));  // only the first round takes joiners
}

TEST_F(ProposerTest, ACommitOurBallotDoesNotDominateInTimeMakesTheRoundRetryAboveIt) {
  Make({IfNotExists("b", "x")});
  auto prepares = Start();
  const Ballot close = At(prepares.at(1).ballot().micros(), 1);  // same time, lower unique word
  for (NodeId replica : {NodeId{1}, NodeId{2}}) {
    PaxosPromise promise = Promise(prepares.at(replica), Rows({{"a", "old"}}));
    *promise.mutable_committed() = ProposalOf(close, Rows({{"a", "old"}}));
    proposer_->OnPromise(replica, promise);
  }
  Take();
  EXPECT_TRUE(probes_.Saw("paxos.retry_above_latest_commit"));
  auto again = Sent(Envelope::kPaxosPrepare);
  ASSERT_EQ(again.size(), 3u);
  EXPECT_GE(again.at(1).paxos_prepare().ballot().micros(), close.micros() + 2);
}

}  // namespace
}  // namespace charybdis
