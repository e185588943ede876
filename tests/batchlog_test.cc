// The batch log's replay (core/batchlog/batchlog.h), one tick at a time:
// an entry is replayed only once it is due, each of its mutations at ONE
// with the batch's timestamp, and it goes only when every mutation
// succeeded (a dropped table's counts); a replay that failed is tried
// again at a later tick.

#include "core/batchlog/batchlog.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/fake_env.h"

namespace charybdis {
namespace {

struct RunCall {
  PartitionData mutation;
  Timestamp timestamp = 0;
  ConsistencyLevel level = CL_UNSET;
  Batchlog::Reply reply;
};

class BatchlogTest : public ::testing::Test {
 protected:
  BatchlogTest()
      : fake_(Address{1, 0}),
        batchlog_([this] {
                    fake_.env.probes = &probes_;
                    return fake_.env;
                  }(),
                  config_, metrics_,
                  [this](PartitionData mutation, Timestamp timestamp, ConsistencyLevel level, Batchlog::Reply reply) {
                    runs_.push_back(RunCall{std::move(mutation), timestamp, level, std::move(reply)});
                  }) {
    batchlog_.Start();
  }

  // Stores a batch of `partitions` mutations (synced, acknowledged).
  void Store(const std::string& batch_id, int partitions) {
    Envelope message;
    message.set_from_node(2);
    BatchlogStore* store = message.mutable_batchlog_store();
    store->set_request_id(7);
    store->set_batch_id(batch_id);
    store->mutable_entry()->set_timestamp(1234);
    for (int i = 0; i < partitions; i++) {
      PartitionData* mutation = store->mutable_entry()->add_mutation();
      mutation->set_table("ks.t");
      mutation->set_partition_key("p" + std::to_string(i));
    }
    batchlog_.OnStore(message);
    fake_.storage.CompleteAll();
    const std::vector<Envelope> acks = fake_.network.TakeSent();
    ASSERT_EQ(acks.size(), 1u);
    EXPECT_TRUE(acks[0].replica_write_ack().ok());
  }

  // One replay tick: time moves on by the replay interval, and the scan
  // of the log completes.
  void Tick() {
    fake_.clock.Advance(config_.coordinator.hint_replay_interval);
    fake_.storage.CompleteAll();
  }

  // Ticks until the replay of the stored entry starts (it is due twice
  // the write timeout after it was stored), or long after.
  void TickUntilReplayed() {
    while (runs_.empty() && fake_.clock.Now() < 10 * config_.coordinator.write_timeout) Tick();
  }

  void Answer(size_t run, ClientResponse::Code code) {
    ClientResponse response;
    response.set_code(code);
    runs_.at(run).reply(response);
    fake_.storage.CompleteAll();
  }

  size_t Entries() { return fake_.storage.contents().size(); }

  testing::FakeEnv fake_;
  testing::CountingProbes probes_;
  NodeConfig config_;
  ShardMetrics metrics_;
  std::vector<RunCall> runs_;
  Batchlog batchlog_;
};

TEST_F(BatchlogTest, AnEntryIsReplayedOnlyOnceDueAtOneWithTheBatchsTimestamp) {
  // Stored long after the clock's zero: an entry is due by when it was stored.
  fake_.clock.Advance(100 * kSecond);
  const Nanos stored_at = fake_.clock.Now();
  Store("b1", 2);
  Tick();  // stored a tick ago: its coordinator may still be writing it
  EXPECT_TRUE(runs_.empty());
  while (runs_.empty() && fake_.clock.Now() < stored_at + 10 * config_.coordinator.write_timeout) Tick();
  ASSERT_EQ(runs_.size(), 2u);
  EXPECT_GE(fake_.clock.Now(), stored_at + 2 * config_.coordinator.write_timeout);
  for (const RunCall& run : runs_) {
    EXPECT_EQ(run.timestamp, 1234);
    EXPECT_EQ(run.level, CL_ONE);
  }
  EXPECT_EQ(probes_.reached["batchlog.replayed"], 1);
  Answer(0, ClientResponse::OK);
  EXPECT_EQ(Entries(), 1u);  // one mutation still unanswered
  Answer(1, ClientResponse::OK);
  EXPECT_EQ(Entries(), 0u);
}

TEST_F(BatchlogTest, AReplayWhoseWriteFailedKeepsTheEntryAndIsTriedAgain) {
  Store("b1", 2);
  TickUntilReplayed();
  ASSERT_EQ(runs_.size(), 2u);
  Answer(0, ClientResponse::OK);
  Answer(1, ClientResponse::UNAVAILABLE);
  EXPECT_EQ(Entries(), 1u) << "a batch whose write failed was dropped from the log";
  Tick();
  ASSERT_EQ(runs_.size(), 4u);  // both mutations again
  Answer(2, ClientResponse::OK);
  Answer(3, ClientResponse::OK);
  EXPECT_EQ(Entries(), 0u);
}

TEST_F(BatchlogTest, AReplayRunsOnceAtATimeAndADroppedTablesMutationCountsAsDone) {
  Store("b1", 1);
  TickUntilReplayed();
  ASSERT_EQ(runs_.size(), 1u);
  Tick();
  EXPECT_EQ(runs_.size(), 1u) << "replayed again while the first replay runs";
  Answer(0, ClientResponse::INVALID_REQUEST);
  EXPECT_EQ(Entries(), 0u);
}

TEST_F(BatchlogTest, ARemovedEntryIsNeverReplayed) {
  Store("b1", 1);
  Envelope remove;
  remove.mutable_batchlog_remove()->set_batch_id("b1");
  batchlog_.OnRemove(remove);
  fake_.storage.CompleteAll();
  for (int i = 0; i < 10; i++) Tick();
  EXPECT_TRUE(runs_.empty());
  EXPECT_EQ(Entries(), 0u);
}

// A torn entry (flipped bytes fail its checksum) cannot be replayed: it is
// removed, and the entries after it in the log are replayed still.
TEST_F(BatchlogTest, ATornEntryIsRemovedAndTheEntriesAfterItAreReplayed) {
  Store("b1", 1);
  Store("b2", 1);
  ASSERT_EQ(Entries(), 2u);
  std::string& torn = fake_.storage.contents().begin()->second;  // b1's
  torn[torn.size() / 2] ^= 0x5a;
  TickUntilReplayed();
  ASSERT_EQ(runs_.size(), 1u) << "b2 was not replayed";
  EXPECT_EQ(runs_[0].mutation.partition_key(), "p0");
  Answer(0, ClientResponse::OK);
  EXPECT_EQ(Entries(), 0u) << "the torn entry was kept";
}

// An entry with no mutations (a peer's malformed store) has nothing to
// replay: it is removed, and the entries after it are replayed still.
TEST_F(BatchlogTest, AnEntryWithoutMutationsIsRemovedUnreplayed) {
  Store("b1", 0);
  Store("b2", 1);
  ASSERT_EQ(Entries(), 2u);
  TickUntilReplayed();
  ASSERT_EQ(runs_.size(), 1u);
  EXPECT_EQ(probes_.reached["batchlog.replayed"], 1) << "the empty entry was replayed";
  Answer(0, ClientResponse::OK);
  EXPECT_EQ(Entries(), 0u) << "the empty entry was kept";
}

}  // namespace
}  // namespace charybdis
