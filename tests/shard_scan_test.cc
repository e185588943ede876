// One shard's part of a scan (core/replica/shard_scan.h) over more stored
// entries than one storage batch holds.

#include "core/replica/shard_scan.h"

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <vector>

#include "core/data/storage_codec.h"
#include "core/replica/replica.h"
#include "core/telemetry/metrics.h"
#include "tests/fake_env.h"

namespace charybdis {
namespace {

class ShardScanTest : public ::testing::Test {
 protected:
  // Partitions p0..p2 of 150 rows, two cells each: 900 entries, several
  // storage batches.
  ShardScanTest() {
    for (int p = 0; p < 3; p++) {
      for (int r = 0; r < 150; r++) {
        Partition partition;
        const std::string row = "r" + std::to_string(1000 + r);
        partition.rows[row].cells["a"] = Cell{1, false, "x", 0, 0};
        partition.rows[row].cells["b"] = Cell{1, false, "y", 0, 0};
        WriteBatch batch;
        storage_codec::AddMutation("t", "p" + std::to_string(p), partition, batch);
        for (auto& put : batch.operations) storage_.contents()[put.key] = *put.value;
      }
    }
    WriteBatch other;
    storage_codec::AddMutation("u", "p0", partition_of_other_table(), other);
    for (auto& put : other.operations) storage_.contents()[put.key] = *put.value;
  }
  static Partition partition_of_other_table() {
    Partition partition;
    partition.rows["r"].cells["a"] = Cell{1, false, "z", 0, 0};
    return partition;
  }

  ShardScanResult Scan(uint32_t limit) {
    ScanOp scan;
    scan.set_table("t");
    scan.set_start_token(kMinimumToken);
    scan.set_end_token(std::numeric_limits<Token>::max());
    scan.set_limit(limit);
    std::optional<absl::StatusOr<ShardScanResult>> result;
    ScanShardRows(storage_, scan, [&](absl::StatusOr<ShardScanResult> done) { result = std::move(done); });
    storage_.CompleteAll();
    EXPECT_TRUE(result.has_value()) << "no answer";
    EXPECT_TRUE(result && result->ok());
    return result && result->ok() ? **result : ShardScanResult{};
  }

  // The first `entries` stored entries of table t, in key order.
  std::vector<KeyValue> FirstEntries(size_t entries) {
    std::vector<KeyValue> first;
    const std::string prefix = storage_codec::TablePrefix("t");
    for (const auto& [key, value] : storage_.contents()) {
      if (first.size() < entries && key.compare(0, prefix.size(), prefix) == 0) first.push_back({key, value});
    }
    return first;
  }

  testing::QueuedStorage storage_;
};

TEST_F(ShardScanTest, StopsAtTheLimitWithWholeRowsAcrossBatches) {
  const ShardScanResult some = Scan(200);
  EXPECT_FALSE(some.exhausted);
  EXPECT_EQ(some.entries, FirstEntries(400));
}

TEST_F(ShardScanTest, ReadsEveryEntryOnceWhenTheLimitIsNotReached) {
  const ShardScanResult all = Scan(1000);
  EXPECT_TRUE(all.exhausted);
  EXPECT_EQ(all.entries, FirstEntries(900));
  const auto partitions = GroupByPartition(all.entries);
  ASSERT_EQ(partitions.size(), 3u);
  for (const auto& [partition_key, entries] : partitions) EXPECT_EQ(entries.size(), 300u) << partition_key;
}

class NoRounds final : public UnfinishedRounds {
 public:
  bool InProgress(const std::string&, const std::string&) const override { return false; }
  std::optional<std::vector<std::string>> InProgressIn(const std::string&, Token, Token) const override {
    return std::vector<std::string>();
  }
};

// A replica never serves bytes it cannot vouch for, and says so at once:
// its coordinator asks another replica instead of waiting out a timeout.
TEST(ReplicaScanTest, AScanThatMeetsACorruptEntryAnswersNotOk) {
  testing::FakeEnv fake(Address{2, 0});
  ShardMetrics metrics;
  NoRounds rounds;
  const uint64_t no_fence = 0;
  // Nothing purgeable: every deletion is served.
  const PurgeHorizon nothing = [](const std::string&, Token) { return std::numeric_limits<Timestamp>::min(); };
  Replica replica(fake.env, metrics, rounds, no_fence, nothing, nothing);
  Partition partition;
  partition.rows["r"].cells["a"] = Cell{1, false, "x", 0, 0};
  WriteBatch batch;
  storage_codec::AddMutation("t", "p", partition, batch);
  fake.storage.contents()[batch.operations[0].key] = "not sealed";

  Envelope message;
  message.set_from_node(1);
  ReplicaScan& request = *message.mutable_replica_scan();
  request.set_request_id(9);
  request.mutable_scan()->set_table("t");
  request.mutable_scan()->set_start_token(kMinimumToken);
  request.mutable_scan()->set_end_token(std::numeric_limits<Token>::max());
  request.mutable_scan()->set_limit(10);
  replica.OnScan(message);
  fake.storage.CompleteAll();
  const std::vector<Envelope> sent = fake.network.TakeSent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].replica_scan_response().request_id(), 9u);
  EXPECT_FALSE(sent[0].replica_scan_response().ok());
  EXPECT_EQ(sent[0].replica_scan_response().partitions_size(), 0);
}

}  // namespace
}  // namespace charybdis
