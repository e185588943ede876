// Hinted handoff on one shard (core/hints/hint_manager.h), one disk
// completion at a time: what an earlier life stored is learned at start,
// even when the first attempt to read it fails; until then no hint is
// stored, so that none reuses a stored hint's sequence number; stored hints
// are replayed once their target is up and deleted once it acknowledged.

#include "core/hints/hint_manager.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "core/data/big_endian.h"
#include "core/data/checked_value.h"
#include "tests/fake_env.h"

namespace charybdis {
namespace {

constexpr NodeId kTarget = 2;

// Fails the first `failures` scans, as a disk error would.
class FailingScans final : public testing::StorageWrapper {
 public:
  FailingScans(Storage& target, int failures) : StorageWrapper(target), failures_(failures) {}
  void Scan(std::string begin, std::string end, size_t limit, ScanDone done) override {
    if (failures_ > 0) {
      failures_--;
      done(absl::UnavailableError("disk read failed"));
      return;
    }
    StorageWrapper::Scan(std::move(begin), std::move(end), limit, std::move(done));
  }

 private:
  int failures_;
};

// Holds writes while `holding`, until released one by one: a write may
// then reach storage after a scan issued later, as on RocksDB.
class HeldApplies final : public testing::StorageWrapper {
 public:
  explicit HeldApplies(Storage& target) : StorageWrapper(target) {}
  void Apply(WriteBatch batch, Durability durability, WriteDone done) override {
    if (!holding) return StorageWrapper::Apply(std::move(batch), durability, std::move(done));
    held_.push_back({std::move(batch), durability, std::move(done)});
  }
  void Release(size_t index) {
    Held& held = held_.at(index);
    StorageWrapper::Apply(std::move(held.batch), held.durability, std::move(held.done));
  }
  size_t held() const { return held_.size(); }

  bool holding = false;

 private:
  struct Held {
    WriteBatch batch;
    Durability durability;
    WriteDone done;
  };
  std::vector<Held> held_;
};

std::string HintKey(NodeId target, uint64_t sequence) {
  std::string key(1, 'h');
  AppendBigEndian(key, target, 4);
  AppendBigEndian(key, sequence, 8);
  return key;
}

PartitionData Mutation(const std::string& partition_key) {
  PartitionData mutation;
  mutation.set_table("ks.t");
  mutation.set_partition_key(partition_key);
  return mutation;
}

class HintManagerTest : public ::testing::Test {
 protected:
  // An earlier life stored one hint for the target, at sequence 5.
  explicit HintManagerTest(int failed_scans = 1)
      : fake_(Address{1, 0}), failing_(fake_.storage, failed_scans) {
    const std::string key = HintKey(kTarget, 5);
    fake_.storage.contents()[key] = checked_value::Seal(key, Mutation("stored").SerializeAsString());
    fake_.env.storage = &failing_;
    fake_.env.probes = &probes_;
    config_.shards = 1;
    hints_ = std::make_unique<HintManager>(fake_.env, config_, liveness_, metrics_,
                                           [this](NodeId node) { return left_.count(node) > 0; });
  }

  // Stores a hint for the target; returns whether it became durable.
  bool Store(const std::string& partition_key) {
    bool stored = false;
    hints_->Store(kTarget, Mutation(partition_key), [&stored](bool ok) { stored = ok; });
    fake_.storage.CompleteAll();
    return stored;
  }

  // The replica writes sent since the last call, by partition key.
  std::vector<std::string> Replayed(std::vector<uint64_t>* request_ids = nullptr) {
    std::vector<std::string> keys;
    for (const Envelope& message : fake_.network.TakeSent()) {
      EXPECT_TRUE(message.has_replica_write());
      EXPECT_EQ(message.to_node(), kTarget);
      keys.push_back(message.replica_write().mutation().partition_key());
      if (request_ids) request_ids->push_back(message.replica_write().request_id());
    }
    return keys;
  }

  testing::FakeEnv fake_;
  FailingScans failing_;
  testing::CountingProbes probes_;
  NodeConfig config_;
  ShardMetrics metrics_;
  LivenessView liveness_{0};
  std::set<NodeId> left_;  // what the topology says left
  std::unique_ptr<HintManager> hints_;
};

TEST_F(HintManagerTest, AFailedFirstLoadIsTriedAgainAndUntilThenNoHintIsStored) {
  liveness_.Update({kTarget}, fake_.clock.Now());
  hints_->Start();
  fake_.storage.CompleteAll();  // the load fails
  EXPECT_FALSE(Store("early")) << "a hint was stored before the stored ones were known";
  EXPECT_TRUE(Replayed().empty());
  fake_.clock.Advance(config_.coordinator.hint_replay_interval);
  fake_.storage.CompleteAll();
  EXPECT_EQ(Replayed(), std::vector<std::string>{"stored"}) << "the earlier life's hint was never replayed";
  // A new hint comes after the stored one: it does not overwrite it.
  EXPECT_TRUE(Store("late"));
  EXPECT_EQ(fake_.storage.contents().count(HintKey(kTarget, 5)), 1u);
  EXPECT_EQ(fake_.storage.contents().count(HintKey(kTarget, 6)), 1u);
}

TEST_F(HintManagerTest, AHintIsReplayedWhenItsTargetComesUpAndDeletedOnceAcknowledged) {
  hints_->Start();
  fake_.storage.CompleteAll();  // the load fails
  fake_.clock.Advance(config_.coordinator.hint_replay_interval);
  fake_.storage.CompleteAll();
  EXPECT_TRUE(Replayed().empty()) << "replayed to a target that is down";
  liveness_.Update({kTarget}, fake_.clock.Now());
  hints_->OnTargetUp(kTarget);
  fake_.storage.CompleteAll();
  std::vector<uint64_t> ids;
  ASSERT_EQ(Replayed(&ids), std::vector<std::string>{"stored"});
  ASSERT_TRUE(HintManager::IsHintRequest(ids[0]));
  hints_->OnAck(kTarget, ids[0], /*ok=*/false);  // the target's disk failed
  fake_.storage.CompleteAll();
  EXPECT_EQ(fake_.storage.contents().size(), 1u) << "a refused hint was deleted";
  hints_->OnTargetUp(kTarget);
  fake_.storage.CompleteAll();
  ids.clear();
  ASSERT_EQ(Replayed(&ids), std::vector<std::string>{"stored"}) << "a refused hint was not sent again";
  hints_->OnAck(kTarget, ids[0], /*ok=*/true);
  fake_.storage.CompleteAll();
  EXPECT_TRUE(fake_.storage.contents().empty()) << "an acknowledged hint was kept";
  EXPECT_EQ(probes_.reached["hints.replayed"], 1);
}

// A target that left the cluster: its hints are deleted at the next tick
// and counted dropped, once, however many ticks pass while it runs.
TEST_F(HintManagerTest, TheHintsOfANodeThatLeftAreDroppedAtTheNextTickOnce) {
  hints_->Start();
  fake_.storage.CompleteAll();  // the load fails
  fake_.clock.Advance(config_.coordinator.hint_replay_interval);
  fake_.storage.CompleteAll();  // loaded: one stored hint for the target
  left_.insert(kTarget);
  fake_.clock.Advance(config_.coordinator.hint_replay_interval);  // a tick: the excision's scan
  fake_.storage.CompleteAll();
  EXPECT_TRUE(fake_.storage.contents().empty()) << "the hints of a node that left were kept past the tick";
  fake_.clock.Advance(config_.coordinator.hint_replay_interval);
  fake_.clock.Advance(config_.coordinator.hint_replay_interval);
  fake_.storage.CompleteAll();
  EXPECT_EQ(metrics_.hints_dropped, 1u) << "dropped twice, or not at all";
  EXPECT_EQ(probes_.reached["hints.dropped_for_left_node"], 1);
  EXPECT_TRUE(Replayed().empty());
}

// A hint whose write lands after the excision's scan read the target's
// hints, and before its delete: the excision did not see it, so the
// target stays, and the next tick excises it too.
TEST_F(HintManagerTest, AHintWrittenWhileANodesHintsAreExcisedIsExcisedAtTheNextTick) {
  HeldApplies held(failing_);
  fake_.env.storage = &held;
  hints_ = std::make_unique<HintManager>(fake_.env, config_, liveness_, metrics_,
                                         [this](NodeId node) { return left_.count(node) > 0; });
  hints_->Start();
  fake_.storage.CompleteAll();  // the load fails
  fake_.clock.Advance(config_.coordinator.hint_replay_interval);
  fake_.storage.CompleteAll();  // loaded: one stored hint for the target
  held.holding = true;
  bool stored = false;
  hints_->Store(kTarget, Mutation("late"), [&stored](bool ok) { stored = ok; });  // before the node left
  left_.insert(kTarget);
  fake_.clock.Advance(config_.coordinator.hint_replay_interval);  // a tick: the excision's scan
  fake_.storage.CompleteAll();  // the scan finds the stored hint alone; its delete is held
  ASSERT_EQ(held.held(), 2u);
  held.Release(0);  // the late hint lands
  fake_.storage.CompleteAll();
  EXPECT_TRUE(stored);
  held.holding = false;
  held.Release(1);  // the excision's delete
  fake_.storage.CompleteAll();
  fake_.clock.Advance(config_.coordinator.hint_replay_interval);
  fake_.storage.CompleteAll();
  EXPECT_TRUE(fake_.storage.contents().empty()) << "a hint for a node that left was kept";
  EXPECT_EQ(metrics_.hints_dropped, 2u);
}

}  // namespace
}  // namespace charybdis
