// Reads of a partition's rows from storage (core/replica/stored_partition.h):
// with a limit, a row is never cut in two however many versions it has,
// and the rows and the range tombstones that may delete them come from one
// snapshot of the store.

#include "core/replica/stored_partition.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "core/data/storage_codec.h"
#include "tests/fake_env.h"

namespace charybdis {
namespace {

constexpr char kTable[] = "t";
constexpr char kKey[] = "p";

// Puts `partition` in the store at once, as a write of it that lands now.
void Store(testing::QueuedStorage& storage, const Partition& partition) {
  WriteBatch batch;
  storage_codec::AddMutation(kTable, kKey, partition, batch);
  for (auto& put : batch.operations) storage.contents()[put.key] = *put.value;
}

Partition Decoded(const std::vector<KeyValue>& entries) {
  storage_codec::Decoded decoded = storage_codec::DecodeScan(entries);
  EXPECT_TRUE(decoded.corrupt_keys.empty());
  return decoded.partition;
}

std::string RowKey(const std::string& clustering) { return storage_codec::RowPrefix(kTable, kKey, clustering); }
std::string PartitionEnd() { return storage_codec::PrefixEnd(storage_codec::PartitionPrefix(kTable, kKey)); }

// Reads up to `limit` rows from `first` to the partition's end, and lets
// storage answer.
absl::StatusOr<RowsUpTo> ReadUpTo(testing::QueuedStorage& storage, const std::string& first, uint32_t limit) {
  std::optional<absl::StatusOr<RowsUpTo>> read;
  ScanPartitionRowsUpTo(storage, kTable, kKey, RowKey(first), PartitionEnd(), limit, false,
                        [&read](absl::StatusOr<RowsUpTo> rows) { read = std::move(rows); });
  storage.CompleteAll();
  EXPECT_TRUE(read.has_value()) << "storage never answered";
  return read.value_or(absl::InternalError("no answer"));
}

// Row "a" has 500 cells, more entries than a read of one row scans at
// first: the read scans again with room for it, and returns it whole.
TEST(StoredPartitionTest, ALimitedReadNeverCutsARowInTwo) {
  testing::QueuedStorage storage;
  Partition partition;
  for (int cell = 0; cell < 500; cell++) partition.rows["a"].cells["c" + std::to_string(cell)] = Cell{1, false, "v", 0, 0};
  partition.rows["b"].cells["c0"] = Cell{1, false, "v", 0, 0};
  partition.rows["c"].cells["c0"] = Cell{1, false, "v", 0, 0};
  Store(storage, partition);
  const absl::StatusOr<RowsUpTo> first = ReadUpTo(storage, "", 1);
  ASSERT_TRUE(first.ok());
  const Partition rows = Decoded(first->entries);
  ASSERT_EQ(rows.rows.size(), 1u);
  EXPECT_EQ(rows.rows.at("a").cells.size(), 500u);
  EXPECT_EQ(first->read_through, "a");

  // From b on, two rows are all there is: no stop.
  const absl::StatusOr<RowsUpTo> rest = ReadUpTo(storage, "b", 2);
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(Decoded(rest->entries).rows.size(), 2u);
  EXPECT_FALSE(rest->read_through.has_value());
}

// Two replicas with the same rows stop at the same one, though one still
// keeps 78 old versions of row b (a read drops them later), enough that
// its first storage scan ends right after them: the stop goes in the
// digest, and stops that differed would make every page a read repair.
TEST(StoredPartitionTest, WhereALimitedReadStopsDependsOnRowsOnly) {
  std::vector<std::optional<std::string>> stops;
  for (const int old_versions : {0, 78}) {
    testing::QueuedStorage storage;
    for (int version = 1; version <= old_versions; version++) {
      Partition old;
      old.rows["b"].cells["v"] = Cell{version, false, "old", 0, 0};
      Store(storage, old);
    }
    Partition rows;
    for (const char* row : {"a", "b", "c", "d"}) rows.rows[row].cells["v"] = Cell{1000, false, "new", 0, 0};
    Store(storage, rows);
    const absl::StatusOr<RowsUpTo> read = ReadUpTo(storage, "", 3);
    ASSERT_TRUE(read.ok());
    stops.push_back(read->read_through);
  }
  EXPECT_EQ(stops[0], "c");
  EXPECT_EQ(stops[1], "c");
}

// A mutation holding a range deletion and a row it does not cover, stored
// between the scans of a read that scanned the partition's range
// tombstones and its rows apart, would show the new row beside the rows
// the deletion removed: a state the partition never had. One snapshot
// shows all of the mutation or none.
class WritingBetweenScans final : public testing::StorageWrapper {
 public:
  WritingBetweenScans(testing::QueuedStorage& target, Partition mutation)
      : StorageWrapper(target), target_(target), mutation_(std::move(mutation)) {}
  // The mutation lands as each scan completes: before any scan queued
  // after it reads.
  void Scan(std::string begin, std::string end, size_t limit, ScanDone done) override {
    StorageWrapper::Scan(std::move(begin), std::move(end), limit, [this, done = std::move(done)](auto stored) {
      Store(target_, mutation_);
      done(std::move(stored));
    });
  }
  void ScanRanges(std::vector<ScanRange> ranges, ScanRangesDone done) override {
    StorageWrapper::ScanRanges(std::move(ranges), [this, done = std::move(done)](auto stored) {
      Store(target_, mutation_);
      done(std::move(stored));
    });
  }

 private:
  testing::QueuedStorage& target_;
  Partition mutation_;
};

TEST(StoredPartitionTest, RowsAndTheirRangeTombstonesComeFromOneSnapshot) {
  for (const bool limited : {false, true}) {
    testing::QueuedStorage storage;
    Partition before;
    for (const char* row : {"b", "c", "d"}) before.rows[row].cells["v"] = Cell{1, false, "old", 0, 0};
    Store(storage, before);
    Partition mutation;
    mutation.range_tombstones[ClusteringRange{"b", "e"}] = 2;
    mutation.rows["f"].cells["v"] = Cell{2, false, "new", 0, 0};
    WritingBetweenScans writing(storage, mutation);
    std::optional<absl::StatusOr<std::vector<KeyValue>>> read;
    if (limited) {
      ScanPartitionRowsUpTo(writing, kTable, kKey, RowKey("a"), PartitionEnd(), 10, false,
                            [&read](absl::StatusOr<RowsUpTo> rows) {
                              if (rows.ok()) {
                                read.emplace(std::move(rows->entries));
                              } else {
                                read.emplace(rows.status());
                              }
                            });
    } else {
      ScanPartitionRows(writing, kTable, kKey, {{RowKey("a"), PartitionEnd()}},
                        [&read](absl::StatusOr<std::vector<KeyValue>> stored) { read = std::move(stored); });
    }
    storage.CompleteAll();
    ASSERT_TRUE(read.has_value() && read->ok());
    Partition seen = Decoded(**read);
    seen.Compact();
    const bool old_rows = seen.rows.count("b") > 0;
    const bool new_row = seen.rows.count("f") > 0;
    EXPECT_NE(old_rows, new_row) << (limited ? "limited" : "whole") << ": half of a mutation";
  }
}

}  // namespace
}  // namespace charybdis
