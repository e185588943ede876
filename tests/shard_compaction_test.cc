// A shard's compaction (core/repair/shard_compaction.h) of a partition
// larger than one batch, stepped one storage operation at a time: a range
// tombstone written between two batches goes only with a compaction that
// saw it in every batch, or the rows of the earlier batches it shadows
// come back.

#include "core/repair/shard_compaction.h"

#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "core/data/storage_codec.h"
#include "core/telemetry/metrics.h"
#include "tests/fake_env.h"

namespace charybdis {
namespace {

constexpr char kTable[] = "t";
constexpr char kPartition[] = "p";
constexpr Timestamp kPurgeBefore = 1000;

// Writes `deletion` into the store right before the compaction's second
// batch reads the partition's range tombstones again: after the first
// batch dropped what the tombstones it saw shadowed.
class DeletingBetweenBatches final : public testing::StorageWrapper {
 public:
  DeletingBetweenBatches(testing::QueuedStorage& target, Partition deletion)
      : StorageWrapper(target), target_(target), deletion_(std::move(deletion)) {}
  void Scan(std::string begin, std::string end, size_t limit, ScanDone done) override {
    if (!written_ && begin == storage_codec::RangeTombstonePrefix(kTable, kPartition)) {
      written_ = true;
      WriteBatch batch;
      storage_codec::AddMutation(kTable, kPartition, deletion_, batch);
      for (auto& put : batch.operations) target_.contents()[put.key] = *put.value;
    }
    StorageWrapper::Scan(std::move(begin), std::move(end), limit, std::move(done));
  }
  bool written() const { return written_; }

 private:
  testing::QueuedStorage& target_;
  Partition deletion_;
  bool written_ = false;
};

class ShardCompactionTest : public ::testing::Test {
 protected:
  ShardCompactionTest() : fake_(Address{1, 0}) {
    fake_.env.reactor = &reactor_;
    for (int row = 0; row < 300; row++) {
      Partition partition;
      partition.rows["r" + std::to_string(1000 + row)].cells["a"] = Cell{10, false, "v", 0, 0};
      WriteBatch batch;
      storage_codec::AddMutation(kTable, kPartition, partition, batch);
      for (auto& put : batch.operations) fake_.storage.contents()[put.key] = *put.value;
    }
    deletion_.range_tombstones[ClusteringRange{"", ""}] = 20;
  }

  // Compacts table t through `storage` until the shard answers.
  void Compact(Storage& storage) {
    ShardEnv env = fake_.env;
    env.storage = &storage;
    repair::ShardCompaction compaction(
        env, [](const CompactOp&) { return std::vector<std::string>{kTable}; },
        [](const std::string&, Token) { return kPurgeBefore; },
        [](const std::string&, const std::string&, std::function<void(bool)> done) { done(false); }, metrics_);
    Envelope request;
    request.set_from_node(1);
    request.set_from_shard(0);
    request.mutable_shard_compact()->set_request_id(1);
    compaction.OnRequest(request);
    while (fake_.storage.CompleteNext() || reactor_.RunNext()) {
    }
    const std::vector<Envelope> sent = fake_.network.TakeSent();
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_TRUE(sent[0].shard_compact_done().ok()) << sent[0].shard_compact_done().error();
  }

  // The partition as a read reconciles it from what is stored.
  storage_codec::Decoded Stored() {
    const std::string prefix = storage_codec::PartitionPrefix(kTable, kPartition);
    std::vector<KeyValue> entries;
    for (const auto& [key, value] : fake_.storage.contents()) {
      if (key.compare(0, prefix.size(), prefix) == 0) entries.push_back({key, value});
    }
    return storage_codec::DecodeScan(entries);
  }

  testing::FakeEnv fake_;
  testing::QueuedReactor reactor_;
  ShardMetrics metrics_;
  Partition deletion_;
};

TEST_F(ShardCompactionTest, ARangeTombstoneWrittenBetweenBatchesWaitsForTheNextCompaction) {
  DeletingBetweenBatches storage(fake_.storage, deletion_);
  Compact(storage);
  ASSERT_TRUE(storage.written()) << "the compaction read the partition in one batch";
  // The second batch dropped its rows, which the tombstone shadows; the
  // first batch's rows stay on disk, shadowed, so the tombstone stays.
  EXPECT_TRUE(Stored().partition.rows.empty());
  EXPECT_EQ(Stored().partition.range_tombstones, deletion_.range_tombstones);
  // The next compaction sees it in every batch: it goes, and all it shadowed.
  Compact(fake_.storage);
  EXPECT_TRUE(Stored().partition.empty());
  EXPECT_TRUE(Stored().obsolete_keys.empty());
  const std::string prefix = storage_codec::PartitionPrefix(kTable, kPartition);
  auto left = fake_.storage.contents().lower_bound(prefix);
  EXPECT_TRUE(left == fake_.storage.contents().end() || left->first.compare(0, prefix.size(), prefix) != 0);
}

}  // namespace
}  // namespace charybdis
