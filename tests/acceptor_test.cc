// The acceptor stepped one message and one disk completion at a time, on
// the fakes of tests/fake_env.h: no cluster, no simulator.

#include "core/paxos/acceptor.h"

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "core/data/checked_value.h"
#include "core/data/storage_codec.h"
#include "core/paxos/ballot.h"
#include "tests/fake_env.h"

namespace charybdis {
namespace {

class AcceptorTest : public ::testing::Test {
 protected:
  AcceptorTest() : fake_(Address{2, 0}), acceptor_(fake_.env, metrics_) {
    acceptor_.Start();
    fake_.storage.CompleteAll();
  }

  static Ballot At(int64_t micros, uint64_t unique = 1) {
    Ballot ballot;
    ballot.set_micros(micros);
    ballot.set_unique(unique);
    return ballot;
  }
  static Envelope Prepare(const Ballot& ballot) {
    Envelope message;
    message.set_from_node(1);
    PaxosPrepare* prepare = message.mutable_paxos_prepare();
    prepare->set_request_id(7);
    *prepare->mutable_ballot() = ballot;
    prepare->set_table("t");
    prepare->set_partition_key("k");
    return message;
  }
  static Envelope Accept(const Ballot& ballot, const std::string& value) {
    Envelope message;
    message.set_from_node(1);
    PaxosAccept* accept = message.mutable_paxos_accept();
    accept->set_request_id(8);
    Proposal* proposal = accept->mutable_proposal();
    *proposal->mutable_ballot() = ballot;
    *proposal->mutable_origin() = ballot;
    PartitionData* data = proposal->mutable_mutation();
    data->set_table("t");
    data->set_partition_key("k");
    RowData* row = data->add_rows();
    CellData* cell = row->add_cells();
    cell->set_column("v");
    cell->set_value(value);
    cell->set_timestamp(ballot.micros());
    return message;
  }
  PaxosState Durable() {
    PaxosState state;
    const std::string key = storage_codec::PaxosKey("t", "k");
    auto it = fake_.storage.contents().find(key);
    if (it == fake_.storage.contents().end()) return state;
    EXPECT_TRUE(ParseStoredPaxosState(key, it->second, state));
    return state;
  }

  // The synced promise horizon, in ballot microseconds (0: none yet).
  int64_t Horizon() {
    const char* key = Acceptor::kHorizonKeys[0];
    auto it = fake_.storage.contents().find(key);
    if (it == fake_.storage.contents().end()) return 0;
    const std::optional<std::string_view> payload = checked_value::Open(key, it->second);
    EXPECT_TRUE(payload.has_value());
    return payload ? std::stoll(std::string(*payload)) : -1;
  }

  testing::FakeEnv fake_;
  ShardMetrics metrics_;
  Acceptor acceptor_;
};

TEST_F(AcceptorTest, TheFirstPromiseIsSentOnlyOnceItAndARaisedHorizonAreDurable) {
  acceptor_.OnPrepare(Prepare(At(100)));
  ASSERT_TRUE(fake_.storage.CompleteNext());  // load the partition's state
  ASSERT_TRUE(fake_.storage.CompleteNext());  // ... write the promise
  EXPECT_TRUE(fake_.network.TakeSent().empty()) << "replied before the read folded into the prepare";
  EXPECT_EQ(Durable().promised().micros(), 100);  // durable before any reply
  EXPECT_GT(Horizon(), 100);
  fake_.storage.CompleteAll();                     // the read of the partition
  const std::vector<Envelope> sent = fake_.network.TakeSent();
  ASSERT_EQ(sent.size(), 1u);
  ASSERT_TRUE(sent[0].has_paxos_promise());
  EXPECT_TRUE(sent[0].paxos_promise().promised());
  EXPECT_EQ(sent[0].to_node(), 1u);
}

TEST_F(AcceptorTest, APromiseSaysWhatBecameOfAnOriginOnlyWhenAsked) {
  acceptor_.OnPrepare(Prepare(At(100)));
  fake_.storage.CompleteAll();
  EXPECT_EQ(fake_.network.TakeSent().at(0).paxos_promise().origin_fate(), PaxosPromise::ORIGIN_NOT_ASKED);
  Envelope asked = Prepare(At(200));
  *asked.mutable_paxos_prepare()->mutable_uncertain_origin() = At(150);
  acceptor_.OnPrepare(asked);
  fake_.storage.CompleteAll();
  EXPECT_EQ(fake_.network.TakeSent().at(0).paxos_promise().origin_fate(), PaxosPromise::ORIGIN_NOT_COMMITTED);
}

TEST_F(AcceptorTest, APromiseBelowTheHorizonIsKeptInMemoryAndSentWithoutAWrite) {
  acceptor_.OnPrepare(Prepare(At(100)));
  fake_.storage.CompleteAll();
  fake_.network.TakeSent();
  const int64_t horizon = Horizon();
  acceptor_.OnPrepare(Prepare(At(200)));
  ASSERT_TRUE(fake_.storage.CompleteNext());  // the read folded into the prepare, no write
  EXPECT_EQ(fake_.storage.pending(), 0u);
  std::vector<Envelope> sent = fake_.network.TakeSent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_TRUE(sent[0].paxos_promise().promised());
  EXPECT_EQ(Durable().promised().micros(), 100);  // not written
  EXPECT_EQ(Horizon(), horizon);
  // Still a promise: a ballot between the two is refused, and the accept
  // that follows makes the promise durable with it.
  acceptor_.OnAccept(Accept(At(150), "late"));
  fake_.storage.CompleteAll();
  sent = fake_.network.TakeSent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_FALSE(sent[0].paxos_accept_reply().accepted());
  EXPECT_EQ(sent[0].paxos_accept_reply().promised_ballot().micros(), 200);
  acceptor_.OnAccept(Accept(At(200), "v"));
  fake_.storage.CompleteAll();
  EXPECT_EQ(Durable().promised().micros(), 200);
  EXPECT_EQ(Durable().accepted().ballot().micros(), 200);
}

TEST_F(AcceptorTest, ABallotNearTheHorizonRaisesItWithThePromise) {
  acceptor_.OnPrepare(Prepare(At(100)));
  fake_.storage.CompleteAll();
  fake_.network.TakeSent();
  const int64_t horizon = Horizon();
  const int64_t near = horizon - Acceptor::kHorizonRaiseMicros;
  acceptor_.OnPrepare(Prepare(At(near)));
  ASSERT_TRUE(fake_.storage.CompleteNext());  // the promise and the horizon, synced
  EXPECT_EQ(Durable().promised().micros(), near);
  EXPECT_GE(Horizon(), near + Acceptor::kHorizonWindowMicros);
  EXPECT_TRUE(fake_.network.TakeSent().empty());  // after the read
  fake_.storage.CompleteAll();
  EXPECT_EQ(fake_.network.TakeSent().size(), 1u);
}

// A power cut takes the promises kept in memory; the next life refuses
// every ballot below the last synced horizon, so none of them is broken.
TEST_F(AcceptorTest, AfterAPowerCutEveryBallotBelowTheHorizonIsRefused) {
  acceptor_.OnPrepare(Prepare(At(100)));
  fake_.storage.CompleteAll();
  acceptor_.OnPrepare(Prepare(At(300)));  // in memory only
  fake_.storage.CompleteAll();
  fake_.network.TakeSent();
  const int64_t horizon = Horizon();
  fake_.storage.PowerCut();
  EXPECT_EQ(Durable().promised().micros(), 100);  // the promise of 300 is gone

  ShardMetrics metrics;
  Acceptor restarted(fake_.env, metrics);
  restarted.Start();
  fake_.storage.CompleteAll();
  restarted.OnAccept(Accept(At(200), "below the lost promise"));
  restarted.OnPrepare(Prepare(At(horizon - 1)));
  fake_.storage.CompleteAll();
  std::vector<Envelope> sent = fake_.network.TakeSent();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_FALSE(sent[0].paxos_accept_reply().accepted());
  EXPECT_FALSE(sent[1].paxos_promise().promised());
  EXPECT_EQ(sent[1].paxos_promise().promised_ballot().micros(), horizon);
  EXPECT_FALSE(Durable().has_accepted());
  restarted.OnPrepare(Prepare(At(horizon)));
  fake_.storage.CompleteAll();
  sent = fake_.network.TakeSent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_TRUE(sent[0].paxos_promise().promised());
}

TEST_F(AcceptorTest, AnUnreadableHorizonStopsEveryDecisionButOneGoodCopyIsEnough) {
  acceptor_.OnPrepare(Prepare(At(100)));  // writes both copies
  fake_.storage.CompleteAll();
  fake_.network.TakeSent();
  const int64_t horizon = Horizon();
  auto restart_and_prepare = [this](int64_t micros) {
    testing::CountingProbes probes;
    fake_.env.probes = &probes;
    ShardMetrics metrics;
    Acceptor restarted(fake_.env, metrics);
    restarted.Start();
    fake_.storage.CompleteAll();
    restarted.OnPrepare(Prepare(At(micros)));
    fake_.storage.CompleteAll();
    fake_.env.probes = NoProbes::Instance();
    return std::make_pair(fake_.network.TakeSent(), probes.reached["storage.corrupt_paxos_horizon"]);
  };
  fake_.storage.contents()[Acceptor::kHorizonKeys[1]] = "garbage";
  auto [sent, corrupt] = restart_and_prepare(horizon + 1);
  ASSERT_EQ(sent.size(), 1u) << "one good copy of the horizon is enough";
  EXPECT_TRUE(sent[0].paxos_promise().promised());
  EXPECT_EQ(corrupt, 0);
  for (const char* key : Acceptor::kHorizonKeys) fake_.storage.contents()[key] = "garbage";
  std::tie(sent, corrupt) = restart_and_prepare(horizon + 2);
  EXPECT_TRUE(sent.empty());
  EXPECT_EQ(corrupt, 1);
  EXPECT_EQ(Durable().promised().micros(), horizon + 1);
}

TEST_F(AcceptorTest, ABallotFarAheadOfTheClockIsSyncedWithoutRaisingTheHorizon) {
  acceptor_.OnPrepare(Prepare(At(100)));
  fake_.storage.CompleteAll();
  const int64_t horizon = Horizon();
  const int64_t far = fake_.clock.Now() / kMicrosecond + 10 * Acceptor::kHorizonMaxLeadMicros;
  acceptor_.OnPrepare(Prepare(At(far)));
  ASSERT_TRUE(fake_.storage.CompleteNext());  // the promise, synced
  EXPECT_EQ(Durable().promised().micros(), far);
  EXPECT_EQ(Horizon(), horizon);
}

TEST_F(AcceptorTest, ALowerBallotIsRefusedWithThePromiseItLost) {
  acceptor_.OnPrepare(Prepare(At(200)));
  fake_.storage.CompleteAll();
  fake_.network.TakeSent();
  acceptor_.OnPrepare(Prepare(At(150)));
  fake_.storage.CompleteAll();
  std::vector<Envelope> sent = fake_.network.TakeSent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_FALSE(sent[0].paxos_promise().promised());
  EXPECT_EQ(sent[0].paxos_promise().promised_ballot().micros(), 200);
  acceptor_.OnAccept(Accept(At(150), "late"));
  fake_.storage.CompleteAll();
  sent = fake_.network.TakeSent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_FALSE(sent[0].paxos_accept_reply().accepted());
  EXPECT_FALSE(Durable().has_accepted());  // nothing accepted below the promise
  EXPECT_EQ(Durable().promised().micros(), 200);
}

TEST_F(AcceptorTest, DecisionsOnOnePartitionWaitForTheDiskOneAtATime) {
  acceptor_.OnPrepare(Prepare(At(100)));
  acceptor_.OnAccept(Accept(At(100), "v"));
  ASSERT_TRUE(fake_.storage.CompleteNext());  // load
  EXPECT_EQ(fake_.storage.pending(), 1u);     // the promise's write only: the accept waits
  fake_.storage.CompleteAll();
  EXPECT_EQ(Durable().accepted().ballot().micros(), 100);
  bool promised = false, accepted = false;
  for (const Envelope& message : fake_.network.TakeSent()) {
    promised = promised || message.has_paxos_promise();
    accepted = accepted || (message.has_paxos_accept_reply() && message.paxos_accept_reply().accepted());
  }
  EXPECT_TRUE(promised);
  EXPECT_TRUE(accepted);
  EXPECT_TRUE(acceptor_.InProgress("t", "k"));  // accepted, not committed
}

TEST_F(AcceptorTest, APromiseCarriesTheRowsThePrepareNamesNotTheWholePartition) {
  Partition stored;
  for (const char* row : {"a", "b", "c", "d", "e"}) stored.rows[row].cells["v"] = Cell{10, false, row, 0, 0};
  WriteBatch batch;
  storage_codec::AddMutation("t", "k", stored, batch);
  for (const WriteBatch::Operation& op : batch.operations) fake_.storage.contents()[op.key] = *op.value;

  auto rows_sent = [this](const std::vector<std::pair<std::string, std::string>>& spans, int64_t micros) {
    Envelope prepare = Prepare(At(micros));
    for (const auto& [first, last] : spans) {
      RowSpan* span = prepare.mutable_paxos_prepare()->add_read_rows();
      span->set_first(first);
      span->set_last(last);
    }
    acceptor_.OnPrepare(prepare);
    fake_.storage.CompleteAll();
    std::vector<Envelope> sent = fake_.network.TakeSent();
    EXPECT_EQ(sent.size(), 1u);
    std::vector<std::string> rows;
    if (sent.empty()) return rows;
    for (const auto& [key, row] : Partition::FromProto(sent[0].paxos_promise().data()).rows) rows.push_back(key);
    return rows;
  };
  using Rows = std::vector<std::string>;
  EXPECT_EQ(rows_sent({{"b", "d"}}, 100), (Rows{"b", "c", "d"}));
  // One span per operation of a shared round: nothing between them.
  EXPECT_EQ(rows_sent({{"a", "a"}, {"c", "c"}, {"e", "e"}}, 110), (Rows{"a", "c", "e"}));
  // No span: a range read, the whole partition; spans out of order too.
  EXPECT_EQ(rows_sent({}, 200), (Rows{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(rows_sent({{"d", "d"}, {"b", "b"}}, 210), (Rows{"a", "b", "c", "d", "e"}));
}

TEST(AcceptorCacheTest, IdlePartitionsBeyondTheBoundAreDroppedAndReloadedFromDisk) {
  testing::FakeEnv fake(Address{2, 0});
  ShardMetrics metrics;
  Acceptor acceptor(fake.env, metrics, /*max_idle_partitions=*/2);
  acceptor.Start();
  fake.storage.CompleteAll();
  auto prepare = [](const std::string& key, int64_t micros) {
    Envelope message;
    message.set_from_node(1);
    PaxosPrepare* prepare = message.mutable_paxos_prepare();
    prepare->set_request_id(static_cast<uint64_t>(micros));
    prepare->mutable_ballot()->set_micros(micros);
    prepare->mutable_ballot()->set_unique(1);
    prepare->set_table("t");
    prepare->set_partition_key(key);
    return message;
  };
  // k0 is the first promise (synced, it raises the horizon); k1..k4 are
  // kept in memory only.
  for (int i = 0; i < 5; i++) {
    acceptor.OnPrepare(prepare("k" + std::to_string(i), i == 0 ? 100 : 10 * i));
    fake.storage.CompleteAll();
  }
  EXPECT_EQ(acceptor.cached_partitions(), 2u);
  EXPECT_EQ(metrics.paxos_cache_evictions, 3u);
  std::vector<Envelope> sent = fake.network.TakeSent();
  ASSERT_EQ(sent.size(), 5u);
  for (const Envelope& reply : sent) EXPECT_TRUE(reply.paxos_promise().promised());
  // k0, k1 and k2 were dropped. k0's promise comes back from disk; k1's
  // and k2's, kept in memory only, leave the larger of them (20) as the
  // floor a reloaded state is raised to.
  EXPECT_FALSE(fake.storage.contents().count(storage_codec::PaxosKey("t", "k1")));
  auto refused_with = [&](const std::string& key, int64_t micros) -> int64_t {
    acceptor.OnPrepare(prepare(key, micros));
    fake.storage.CompleteAll();
    std::vector<Envelope> replies = fake.network.TakeSent();
    EXPECT_EQ(replies.size(), 1u);
    if (replies.empty() || replies[0].paxos_promise().promised()) return 0;
    return replies[0].paxos_promise().promised_ballot().micros();
  };
  EXPECT_EQ(refused_with("k1", 15), 20);   // the floor, above k1's own 10
  EXPECT_EQ(refused_with("k1", 25), 0);    // promised: above both
  // (Each reload drops one more idle partition: the floor grows.)
  EXPECT_EQ(refused_with("k0", 50), 100);  // from disk: above the floor
  EXPECT_EQ(acceptor.cached_partitions(), 2u);
}

// A repair's fence and purge floor (docs/repair.md, "Paxos state"), with
// the repair history the test sets.
class AcceptorRepairTest : public AcceptorTest {
 protected:
  AcceptorRepairTest()
      : repairing_(
            fake_.env, metrics_, Acceptor::kDefaultMaxIdlePartitions,
            [this](const std::string& table, Token) { return table == "t" ? repaired_since_us_ : 0; },
            [this](const std::string&, Token) { return purge_before_us_; }) {
    repairing_.Start();
    fake_.storage.CompleteAll();
    repairing_.OnRepairHistoryLoaded();
  }

  // Fences all of table t's tokens at `fence_us`; the partitions it names.
  std::vector<std::string> Fence(Acceptor& acceptor, int64_t fence_us) {
    Envelope message;
    message.set_from_node(1);
    PaxosFence& fence = *message.mutable_paxos_fence();
    fence.set_request_id(9);
    fence.set_table("t");
    fence.set_first_token(std::numeric_limits<Token>::min());
    fence.set_last_token(std::numeric_limits<Token>::max());
    fence.set_fence_us(fence_us);
    acceptor.OnFence(message);
    fake_.storage.CompleteAll();
    const std::vector<Envelope> sent = fake_.network.TakeSent();
    EXPECT_EQ(sent.size(), 1u);
    if (sent.empty()) return {};
    EXPECT_TRUE(sent[0].paxos_fenced().ok());
    return {sent[0].paxos_fenced().unfinished_partition_keys().begin(),
            sent[0].paxos_fenced().unfinished_partition_keys().end()};
  }
  // The only reply to `message`.
  Envelope Answer(const Envelope& message) {
    if (message.has_paxos_prepare()) repairing_.OnPrepare(message);
    if (message.has_paxos_accept()) repairing_.OnAccept(message);
    fake_.storage.CompleteAll();
    std::vector<Envelope> sent = fake_.network.TakeSent();
    EXPECT_EQ(sent.size(), 1u);
    return sent.empty() ? Envelope() : sent[0];
  }
  bool Purged() {
    std::optional<bool> purged;
    repairing_.Purge("t", "k", [&purged](bool done) { purged = done; });
    fake_.storage.CompleteAll();
    EXPECT_TRUE(purged.has_value());
    return purged.value_or(false);
  }

  int64_t repaired_since_us_ = 0;
  Timestamp purge_before_us_ = std::numeric_limits<Timestamp>::min();
  Acceptor repairing_;
};

TEST_F(AcceptorRepairTest, AFenceRefusesBallotsBelowItAndNamesUnfinishedProposals) {
  EXPECT_TRUE(Answer(Accept(At(100), "a")).paxos_accept_reply().accepted());
  EXPECT_EQ(Fence(repairing_, 500), std::vector<std::string>{"k"});
  const Envelope refused = Answer(Prepare(At(300)));
  EXPECT_FALSE(refused.paxos_promise().promised());
  EXPECT_EQ(refused.paxos_promise().promised_ballot().micros(), 500);  // the proposer goes above
  EXPECT_FALSE(Answer(Accept(At(400), "b")).paxos_accept_reply().accepted());
  // Above it, the unfinished proposal is reported: the repair finishes it.
  const Envelope promise = Answer(Prepare(At(600)));
  EXPECT_TRUE(promise.paxos_promise().promised());
  EXPECT_EQ(promise.paxos_promise().accepted().ballot().micros(), 100);
}

TEST_F(AcceptorRepairTest, BelowARepairAProposalIsIgnoredAndAStateWhollyBelowIsPurged) {
  EXPECT_TRUE(Answer(Accept(At(100), "a")).paxos_accept_reply().accepted());
  Fence(repairing_, 500);
  EXPECT_FALSE(Purged());  // no repair yet
  repaired_since_us_ = 500;
  EXPECT_EQ(Fence(repairing_, 500), std::vector<std::string>{});  // finished or never: ignored
  const Envelope promise = Answer(Prepare(At(600)));
  EXPECT_TRUE(promise.paxos_promise().promised());
  EXPECT_FALSE(promise.paxos_promise().has_accepted());
  EXPECT_FALSE(repairing_.InProgress("t", "k"));
  EXPECT_FALSE(Purged());  // promised 600: above the floor
  repaired_since_us_ = 1000;
  EXPECT_FALSE(Purged());  // the floor is the lower of the repair and the fence
  Fence(repairing_, 1000);
  EXPECT_TRUE(Purged());
  EXPECT_FALSE(Durable().has_promised());
  EXPECT_EQ(metrics_.paxos_states_purged, 1u);
  // What the state promised, the fence still refuses.
  EXPECT_FALSE(Answer(Prepare(At(700))).paxos_promise().promised());
}

// A stream sends the purged view (docs/repair.md, "Paxos state"): a new
// owner would otherwise report what the other replicas purged.
TEST_F(AcceptorRepairTest, AStreamSendsThePurgedView) {
  EXPECT_TRUE(Answer(Accept(At(100), "a")).paxos_accept_reply().accepted());
  const std::string key = storage_codec::PaxosKey("t", "k");
  const std::string stored = fake_.storage.contents().at(key);
  EXPECT_EQ(repairing_.StreamedView("t", key, stored), stored);  // never repaired: as stored
  Fence(repairing_, 500);
  repaired_since_us_ = 500;
  EXPECT_EQ(repairing_.StreamedView("t", key, stored), std::nullopt);  // wholly below the floor
  // Promised above the floor, a proposal accepted below it is left out.
  PaxosState mixed;
  *mixed.mutable_promised() = At(600);
  *mixed.mutable_accepted()->mutable_ballot() = At(100);
  const std::optional<std::string> view =
      repairing_.StreamedView("t", key, checked_value::Seal(key, mixed.SerializeAsString()));
  ASSERT_TRUE(view.has_value());
  PaxosState sent;
  ASSERT_TRUE(ParseStoredPaxosState(key, *view, sent));
  EXPECT_EQ(sent.promised().micros(), 600);
  EXPECT_FALSE(sent.has_accepted());
  // Above it, as stored.
  EXPECT_TRUE(Answer(Accept(At(700), "b")).paxos_accept_reply().accepted());
  EXPECT_EQ(repairing_.StreamedView("t", key, fake_.storage.contents().at(key)), fake_.storage.contents().at(key));
}

TEST_F(AcceptorRepairTest, AFenceHoldsAfterARestart) {
  Fence(repairing_, 500);
  ShardMetrics metrics;
  Acceptor restarted(fake_.env, metrics);
  restarted.Start();
  fake_.storage.CompleteAll();
  restarted.OnPrepare(Prepare(At(300)));
  fake_.storage.CompleteAll();
  const std::vector<Envelope> sent = fake_.network.TakeSent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_FALSE(sent[0].paxos_promise().promised());
  EXPECT_EQ(sent[0].paxos_promise().promised_ballot().micros(), 500);
}

// The read folded into a promise serves the purged view, as a replica's
// reads do: a proposer that repairs a replica from it never writes a
// purgeable tombstone back (docs/repair.md, "Tombstone GC").
TEST_F(AcceptorRepairTest, APromiseLeavesOutTheDeletionsAPurgeWouldLetGo) {
  Partition deleted;
  deleted.rows[""].tombstone = 100;
  WriteBatch batch;
  storage_codec::AddMutation("t", "k", deleted, batch);
  for (auto& operation : batch.operations) fake_.storage.contents()[operation.key] = *operation.value;
  const Envelope kept = Answer(Prepare(At(600)));
  ASSERT_TRUE(kept.paxos_promise().promised());
  EXPECT_EQ(kept.paxos_promise().data().rows_size(), 1);
  purge_before_us_ = 101;
  const Envelope purged = Answer(Prepare(At(700)));
  ASSERT_TRUE(purged.paxos_promise().promised());
  EXPECT_EQ(purged.paxos_promise().data().rows_size(), 0);
}

// Until the repair history is known, nothing is decided: a purge floor
// read as 0 would report what replicas that purged no longer hold.
TEST_F(AcceptorRepairTest, NothingIsDecidedBeforeTheRepairHistoryIsKnown) {
  ShardMetrics metrics;
  Acceptor restarted(fake_.env, metrics, Acceptor::kDefaultMaxIdlePartitions,
                     [](const std::string&, Token) { return int64_t{500}; });
  restarted.Start();
  fake_.storage.CompleteAll();
  restarted.OnPrepare(Prepare(At(600)));
  fake_.storage.CompleteAll();
  EXPECT_TRUE(fake_.network.TakeSent().empty());
  EXPECT_TRUE(restarted.InProgress("t", "k"));  // unknown: assume the worst
  restarted.OnRepairHistoryLoaded();
  fake_.storage.CompleteAll();
  const std::vector<Envelope> sent = fake_.network.TakeSent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_TRUE(sent[0].paxos_promise().promised());
}

// Below the purge floor a commit is not reported either: it is in every
// replica's table, and sent again it would write its rows back after
// their delete was purged.
TEST_F(AcceptorRepairTest, BelowARepairACommitIsNotReported) {
  Envelope commit = Accept(At(100), "a");
  Proposal proposal = commit.paxos_accept().proposal();
  commit.clear_paxos_accept();
  *commit.mutable_paxos_commit()->mutable_proposal() = proposal;
  repairing_.OnCommit(commit);
  fake_.storage.CompleteAll();
  fake_.network.TakeSent();
  EXPECT_EQ(Answer(Prepare(At(300))).paxos_promise().committed().ballot().micros(), 100);
  Fence(repairing_, 500);
  repaired_since_us_ = 500;
  const Envelope promise = Answer(Prepare(At(600)));
  EXPECT_TRUE(promise.paxos_promise().promised());
  EXPECT_FALSE(promise.paxos_promise().has_committed());
}

}  // namespace
}  // namespace charybdis
