#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "core/data/cell.h"
#include "core/data/checked_value.h"
#include "core/data/partition.h"
#include "core/data/storage_codec.h"
#include "core/data/tombstone_gc.h"

namespace charybdis {
namespace {

Cell Live(Timestamp timestamp, std::string value, Timestamp expiry = 0, uint32_t ttl = 0) {
  return Cell{timestamp, false, std::move(value), expiry, ttl};
}
Cell Dead(Timestamp timestamp) { return Cell{timestamp, true, "", 0, 0}; }

void ExpectWins(const Cell& winner, const Cell& loser) {
  EXPECT_GT(CompareForMerge(winner, loser), 0);
  EXPECT_LT(CompareForMerge(loser, winner), 0);
  EXPECT_EQ(Reconcile(winner, loser), winner);
  EXPECT_EQ(Reconcile(loser, winner), winner);
}

TEST(CellTest, ScyllaTieBreakOrder) {
  ExpectWins(Live(2, "a"), Live(1, "z"));            // newer timestamp
  ExpectWins(Dead(5), Live(5, "z"));                 // tombstone at a tie
  ExpectWins(Live(5, "a", 100, 10), Live(5, "z"));   // expiring beats non-expiring
  ExpectWins(Live(5, "a", 200, 10), Live(5, "z", 100, 10));  // later expiry
  ExpectWins(Live(5, "\x90"), Live(5, "\x10"));      // larger value, unsigned bytes
  ExpectWins(Live(5, "b"), Live(5, "ab"));
  ExpectWins(Live(5, "a", 100, 5), Live(5, "a", 100, 10));  // shorter TTL
  EXPECT_EQ(CompareForMerge(Live(5, "a"), Live(5, "a")), 0);
}

TEST(CellTest, ExpiredCellsReadAsDeleted) {
  EXPECT_TRUE(Live(1, "a", 100, 1).LiveAt(99));
  EXPECT_FALSE(Live(1, "a", 100, 1).LiveAt(100));
  EXPECT_FALSE(Dead(1).LiveAt(0));
  EXPECT_TRUE(Live(1, "a").LiveAt(1'000'000'000));
}

Partition OneCell(const std::string& ck, const std::string& column, Cell cell) {
  Partition partition;
  partition.rows[ck].cells[column] = std::move(cell);
  return partition;
}

TEST(PartitionTest, MergeIsCommutativeAssociativeAndIdempotent) {
  const Partition a = OneCell("r", "x", Live(1, "a"));
  const Partition b = OneCell("r", "x", Live(2, "b"));
  Partition c = OneCell("r", "y", Dead(3));
  c.rows["r"].tombstone = 1;

  Partition ab = a, ba = b;
  ab.Merge(b);
  ba.Merge(a);
  EXPECT_EQ(ab, ba);
  Partition ab_c = ab, bc = b, a_bc = a;
  ab_c.Merge(c);
  bc.Merge(c);
  a_bc.Merge(bc);
  EXPECT_EQ(ab_c, a_bc);
  Partition twice = ab_c;
  twice.Merge(ab_c);
  EXPECT_EQ(twice, ab_c);
  EXPECT_EQ(ab_c.rows["r"].cells["x"].value, "b");
}

TEST(PartitionTest, RowTombstoneShadowsOlderCellsOnly) {
  Partition partition = OneCell("r", "old", Live(5, "a"));
  partition.rows["r"].cells["new"] = Live(7, "b");
  partition.rows["r"].tombstone = 5;
  partition.Compact();
  EXPECT_EQ(partition.rows["r"].cells.count("old"), 0u);
  EXPECT_EQ(partition.rows["r"].cells.count("new"), 1u);
  EXPECT_EQ(partition.rows["r"].NewestTimestamp(), 7);
}

// A collection's elements are cells of their own; its tombstone (a
// tombstone of the column's own cell) shadows those at or before it, in
// this collection only.
TEST(PartitionTest, ACollectionTombstoneShadowsItsOlderElementsOnly) {
  Partition partition;
  Row& row = partition.rows["r"];
  row.cells["s"] = Dead(5);
  row.cells[ElementCellName("s", "old")] = Live(5, "");
  row.cells[ElementCellName("s", "")] = Live(4, "");  // an empty element: a path of no bytes
  row.cells[ElementCellName("s", "new")] = Live(6, "");
  row.cells[ElementCellName("t", "other")] = Live(1, "");
  row.cells["u"] = Dead(9);
  row.cells[ElementCellName("u", "\x00\xff")] = Live(8, "");
  partition.Compact();
  std::vector<std::string> left;
  for (const auto& [name, cell] : partition.rows["r"].cells) left.push_back(name);
  EXPECT_EQ(left, (std::vector<std::string>{"s", ElementCellName("s", "new"), ElementCellName("t", "other"), "u"}));
  EXPECT_EQ(PathOfCell(ElementCellName("u", std::string("\x00\xff", 2))), std::string("\x00\xff", 2));
  EXPECT_EQ(ColumnOfCell(ElementCellName("s", "new")), "s");
  EXPECT_FALSE(IsElementCell("s"));
  // Element names sort by path bytes, right after their column.
  EXPECT_LT(ElementCellName("s", "\x01"), ElementCellName("s", "\x80"));
  EXPECT_LT(ElementCellName("s", "\xff"), "s0");
}

TEST(CellTest, ListElementPathsOrderByPositionThenOrigin) {
  EXPECT_LT(ListElementPath(-7, 9, 9), ListElementPath(-6, 1, 1));  // a later prepend comes first
  EXPECT_LT(ListElementPath(-6, 1, 1), ListElementPath(5, 1, 1));
  EXPECT_LT(ListElementPath(5, 1, 1), ListElementPath(5, 1, 2));
  EXPECT_LT(ListElementPath(5, 1, 2), ListElementPath(5, 2, 1));
  EXPECT_NE(ListElementPath(5, 1, 1), ListElementPath(5, 2, 1));
}

TEST(PartitionTest, MissingIsWhatBringsAReplicaUpToDate) {
  Partition stale = OneCell("r", "x", Live(1, "old"));
  Partition fresh = OneCell("r", "x", Live(2, "new"));
  fresh.rows["s"].tombstone = 4;
  fresh.rows["r"].cells["same"] = Live(1, "v");
  stale.rows["r"].cells["same"] = Live(1, "v");
  const Partition delta = stale.Missing(fresh);
  EXPECT_EQ(delta.rows.at("r").cells.size(), 1u);
  EXPECT_EQ(delta.rows.at("r").cells.at("x").value, "new");
  EXPECT_EQ(delta.rows.at("s").tombstone, 4);
  Partition repaired = stale;
  repaired.Merge(delta);
  EXPECT_EQ(Digest(repaired), Digest(fresh));
  EXPECT_TRUE(fresh.Missing(stale).empty());
  // Replicas in agreement miss nothing, row tombstones included: else read
  // repair and repair would send what is already there, every time.
  EXPECT_TRUE(fresh.Missing(fresh).empty());
}

TEST(PartitionTest, DigestSeesEveryDifference) {
  const Partition base = OneCell("r", "x", Live(1, "a"));
  EXPECT_EQ(Digest(base), Digest(OneCell("r", "x", Live(1, "a"))));
  EXPECT_NE(Digest(base), Digest(OneCell("r", "x", Live(2, "a"))));
  EXPECT_NE(Digest(base), Digest(OneCell("r", "x", Live(1, "b"))));
  EXPECT_NE(Digest(base), Digest(OneCell("r", "y", Live(1, "a"))));
  EXPECT_NE(Digest(base), Digest(OneCell("s", "x", Live(1, "a"))));
  EXPECT_NE(Digest(base), Digest(OneCell("r", "x", Dead(1))));
  Partition with_tombstone = base;
  with_tombstone.rows["r"].tombstone = 0;
  EXPECT_NE(Digest(base), Digest(with_tombstone));
}

TEST(PartitionTest, ProtoRoundTrip) {
  Partition partition = OneCell("r", "x", Live(1, std::string("a\0b", 3), 50, 3));
  partition.rows["s"].tombstone = -7;
  partition.rows["s"].cells["y"] = Dead(9);
  PartitionData data;
  partition.ToProto(&data);
  EXPECT_EQ(Partition::FromProto(data), partition);
}

// Rows a, b, c and d at 5; a range tombstone [b, d) at 5 and a partition
// tombstone at 3: b and c go, a and d stay, and a cell written after the
// range's deletion shows again.
TEST(PartitionTest, ARangeTombstoneShadowsItsRowsWrittenAtOrBeforeIt) {
  Partition partition;
  for (const char* key : {"a", "b", "c", "d"}) partition.rows[key].cells["x"] = Live(5, key);
  partition.rows["c"].cells["later"] = Live(6, "kept");
  partition.rows["b"].tombstone = 4;
  partition.range_tombstones[ClusteringRange{"b", "d"}] = 5;
  partition.range_tombstones[ClusteringRange{"", ""}] = 3;
  EXPECT_EQ(partition.RangeDeletionOf("a"), 3);
  EXPECT_EQ(partition.RangeDeletionOf("b"), 5);
  EXPECT_EQ(partition.RangeDeletionOf("d"), 3);
  EXPECT_EQ(partition.NewestTimestamp(), 6);
  partition.Compact();
  EXPECT_EQ(partition.rows.count("b"), 0u);  // its row tombstone too: older than the range's
  EXPECT_EQ(partition.rows.at("c").cells.size(), 1u);
  EXPECT_EQ(partition.rows.at("c").cells.at("later").value, "kept");
  EXPECT_EQ(partition.rows.at("a").cells.at("x").value, "a");
  EXPECT_EQ(partition.rows.at("d").cells.at("x").value, "d");
  EXPECT_EQ(partition.range_tombstones.size(), 2u);  // deletions stay: other replicas need them
}

// Range tombstones merge, travel, digest and repair as rows do.
TEST(PartitionTest, RangeTombstonesMergeAndAreMissed) {
  Partition stale = OneCell("r", "x", Live(1, "old"));
  stale.range_tombstones[ClusteringRange{"a", "m"}] = 2;
  Partition fresh = stale;
  fresh.range_tombstones[ClusteringRange{"a", "m"}] = 4;
  fresh.range_tombstones[ClusteringRange{"", ""}] = 3;
  const Partition delta = stale.Missing(fresh);
  EXPECT_TRUE(delta.rows.empty());
  EXPECT_EQ(delta.range_tombstones.size(), 2u);
  Partition repaired = stale;
  repaired.Merge(delta);
  EXPECT_EQ(repaired, fresh);
  EXPECT_EQ(Digest(repaired), Digest(fresh));
  EXPECT_NE(Digest(stale), Digest(fresh));
  EXPECT_TRUE(fresh.Missing(stale).empty());
  Partition merged_back = fresh;
  merged_back.Merge(stale);  // the older deletion of the same range loses
  EXPECT_EQ(merged_back, fresh);
  PartitionData data;
  fresh.ToProto(&data);
  EXPECT_EQ(Partition::FromProto(data), fresh);
  Partition moved = OneCell("r", "x", Live(1, "old"));
  moved.range_tombstones[ClusteringRange{"a", "n"}] = 2;
  EXPECT_NE(Digest(stale), Digest(moved));
}

TEST(StorageCodecTest, StoredVersionsReconcileOnRead) {
  WriteBatch batch;
  const std::string pk("p\0k", 3);
  storage_codec::AddMutation("t", pk, OneCell("r", "x", Live(1, "old")), batch);
  storage_codec::AddMutation("t", pk, OneCell("r", "x", Live(3, "new")), batch);
  Partition deletion;
  deletion.rows["r"].tombstone = 2;
  deletion.rows[std::string("\0", 1)].cells["z"] = Dead(4);
  storage_codec::AddMutation("t", pk, deletion, batch);
  // The same mutation twice writes the same key: replays are idempotent.
  storage_codec::AddMutation("t", pk, OneCell("r", "x", Live(3, "new")), batch);
  EXPECT_EQ(batch.operations[1].key, batch.operations[4].key);

  // As the storage holds them: one entry per key, in key order.
  std::map<std::string, std::string> unique;
  for (const auto& operation : batch.operations) unique[operation.key] = *operation.value;
  std::vector<KeyValue> stored;
  for (const auto& [key, value] : unique) stored.push_back({key, value});
  const std::string prefix = storage_codec::PartitionPrefix("t", pk);
  for (const KeyValue& entry : stored) {
    EXPECT_EQ(entry.key.compare(0, prefix.size(), prefix), 0);
    EXPECT_LT(entry.key, storage_codec::PrefixEnd(prefix));
  }
  const storage_codec::Decoded decoded = storage_codec::DecodeScan(stored);
  EXPECT_TRUE(decoded.corrupt_keys.empty());
  const Partition& read = decoded.partition;
  EXPECT_EQ(read.rows.at("r").cells.at("x").value, "new");
  EXPECT_EQ(read.rows.at("r").tombstone, 2);
  EXPECT_TRUE(read.rows.at(std::string("\0", 1)).cells.at("z").tombstone);
  // The old version of x lost: it is the one obsolete key.
  ASSERT_EQ(decoded.obsolete_keys.size(), 1u);
  EXPECT_EQ(decoded.obsolete_keys[0], batch.operations[0].key);
}

TEST(StorageCodecTest, ShadowedVersionsAreObsoleteAndDroppingThemChangesNothing) {
  WriteBatch batch;
  Partition first = OneCell("r", "x", Live(1, "a"));
  first.rows["r"].cells["y"] = Live(5, "keep");
  storage_codec::AddMutation("t", "p", first, batch);
  Partition deletion;
  deletion.rows["r"].tombstone = 3;
  storage_codec::AddMutation("t", "p", deletion, batch);
  Partition older_deletion;
  older_deletion.rows["r"].tombstone = 2;
  storage_codec::AddMutation("t", "p", older_deletion, batch);
  std::map<std::string, std::string> stored;
  for (const auto& operation : batch.operations) stored[operation.key] = *operation.value;
  auto scan = [&] {
    std::vector<KeyValue> rows;
    for (const auto& [key, value] : stored) rows.push_back({key, value});
    return storage_codec::DecodeScan(rows);
  };
  const storage_codec::Decoded before = scan();
  EXPECT_EQ(before.obsolete_keys.size(), 2u);  // x under the tombstone, the older tombstone
  for (const std::string& key : before.obsolete_keys) stored.erase(key);
  const storage_codec::Decoded after = scan();
  EXPECT_TRUE(after.obsolete_keys.empty());
  Partition visible_before = before.partition, visible_after = after.partition;
  visible_before.Compact();
  visible_after.Compact();
  EXPECT_EQ(visible_before, visible_after);
  EXPECT_EQ(after.partition.rows.at("r").cells.at("y").value, "keep");
}

TEST(StorageCodecTest, PrefixesDoNotCaptureOtherKeys) {
  // "a" must not capture keys of partition "a\0..." or "ab".
  const std::string a = storage_codec::PartitionPrefix("t", "a");
  for (const std::string& other : {std::string("ab"), std::string("a\0", 2), std::string("")}) {
    const std::string key = storage_codec::RowPrefix("t", other, "r");
    EXPECT_FALSE(key >= a && key < storage_codec::PrefixEnd(a)) << other.size();
  }
}

// Keys order partitions by token, negative tokens first, as a token
// range scan needs (the token's sign bit is flipped).
TEST(StorageCodecTest, KeysOrderAsTokens) {
  const Token tokens[] = {kMinimumToken, kMinimumToken + 1, -(Token{1} << 62) - 1, -(Token{1} << 62), -1, 0, 1,
                          Token{1} << 62, std::numeric_limits<Token>::max()};
  for (Token a : tokens) {
    for (Token b : tokens) {
      EXPECT_EQ(storage_codec::TokenPrefix("t", a) < storage_codec::TokenPrefix("t", b), a < b) << a << " " << b;
    }
  }
}

TEST(StorageCodecTest, RowOfKeyFindsTheRowOfDataKeysOnly) {
  WriteBatch batch;
  storage_codec::AddMutation("t", "pk", OneCell("ck", "x", Live(1, "v")), batch);
  ASSERT_EQ(batch.operations.size(), 1u);
  const std::optional<storage_codec::StoredRow> row = storage_codec::RowOfKey(batch.operations[0].key);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->token, TokenOf("pk"));
  EXPECT_EQ(row->partition_key, "pk");
  EXPECT_EQ(row->clustering_key, "ck");
  EXPECT_FALSE(storage_codec::RowOfKey(storage_codec::PaxosKey("t", "pk")).has_value());
  EXPECT_FALSE(storage_codec::RowOfKey("system/anything").has_value());
}

TEST(StorageCodecTest, EntriesTheCodecDidNotWriteAreCorrupt) {
  const std::string cell_key = storage_codec::RowPrefix("t", "p", "r") + "c";
  const storage_codec::Decoded decoded = storage_codec::DecodeScan(
      {{"xyz", checked_value::Seal("xyz", "")}, {cell_key, checked_value::Seal(cell_key, "L")}});
  EXPECT_EQ(decoded.corrupt_keys, (std::vector<std::string>{"xyz", cell_key}));
  // A well-formed cell entry under another tag than data's (a misdirected
  // write of another family's key) is not data either.
  WriteBatch batch;
  storage_codec::AddMutation("t", "p", OneCell("r", "x", Live(7, "value")), batch);
  const std::optional<std::string_view> payload =
      checked_value::Open(batch.operations.at(0).key, *batch.operations.at(0).value);
  ASSERT_TRUE(payload.has_value());
  std::string other_tag = batch.operations.at(0).key;
  other_tag[0] = static_cast<char>(other_tag[0] + 1);
  const storage_codec::Decoded misdirected =
      storage_codec::DecodeScan({{other_tag, checked_value::Seal(other_tag, std::string(*payload))}});
  EXPECT_EQ(misdirected.corrupt_keys, (std::vector<std::string>{other_tag}));
}

// The stored entries of one cell and one row tombstone.
std::vector<KeyValue> StoredRow() {
  Partition partition = OneCell("r", "x", Live(7, "value"));
  partition.rows["r"].tombstone = 3;
  WriteBatch batch;
  storage_codec::AddMutation("t", "p", partition, batch);
  std::vector<KeyValue> stored;
  for (const auto& operation : batch.operations) stored.push_back({operation.key, *operation.value});
  std::sort(stored.begin(), stored.end(), [](const KeyValue& a, const KeyValue& b) { return a.key < b.key; });
  return stored;
}

TEST(StorageCodecTest, EveryFlippedBitOfAStoredVersionIsCaught) {
  const std::vector<KeyValue> clean = StoredRow();
  ASSERT_TRUE(storage_codec::DecodeScan(clean).corrupt_keys.empty());
  for (size_t entry = 0; entry < clean.size(); entry++) {
    for (size_t bit = 0; bit < 8 * clean[entry].value.size(); bit++) {
      std::vector<KeyValue> stored = clean;
      stored[entry].value[bit / 8] ^= static_cast<char>(1 << (bit % 8));
      const storage_codec::Decoded decoded = storage_codec::DecodeScan(stored);
      EXPECT_EQ(decoded.corrupt_keys, std::vector<std::string>{clean[entry].key})
          << "entry " << entry << " bit " << bit;
    }
  }
}

TEST(StorageCodecTest, TornAndMisdirectedVersionsAreCaught) {
  const std::vector<KeyValue> clean = StoredRow();
  ASSERT_EQ(clean.size(), 2u);
  for (size_t cut = 0; cut < clean[1].value.size(); cut++) {
    std::vector<KeyValue> torn = clean;
    torn[1].value.resize(cut);
    EXPECT_EQ(storage_codec::DecodeScan(torn).corrupt_keys, std::vector<std::string>{clean[1].key})
        << "cut at " << cut;
  }
  // Correct bytes under the wrong key: the cell's value landed on the
  // tombstone's key.
  std::vector<KeyValue> misdirected = clean;
  misdirected[1].value = clean[0].value;
  misdirected[0].value = clean[1].value;
  EXPECT_EQ(storage_codec::DecodeScan(misdirected).corrupt_keys.size(), 2u);
}


// The stored entries of a batch of mutations, as a scan returns them.
std::vector<KeyValue> Stored(const WriteBatch& batch) {
  std::map<std::string, std::string> unique;
  for (const auto& operation : batch.operations) unique[operation.key] = *operation.value;
  std::vector<KeyValue> stored;
  for (const auto& [key, value] : unique) stored.push_back({key, value});
  return stored;
}

std::vector<KeyValue> Without(const std::vector<KeyValue>& stored, const std::vector<std::string>& keys) {
  std::vector<KeyValue> kept;
  for (const KeyValue& entry : stored) {
    if (std::find(keys.begin(), keys.end(), entry.key) == keys.end()) kept.push_back(entry);
  }
  return kept;
}

// A row deleted at 10 over cells of 5 and 20, a cell deleted at 12 over an
// older value, and a cell that expired at 15: purged before 14, the row
// tombstone, the cell tombstone and the expired cell go with what they
// shadow; the cell of 20 stays, and nothing older comes back.
// Elements at or before their collection's tombstone are obsolete, so a
// purge of the tombstone never leaves one behind.
TEST(StorageCodecTest, ElementsACollectionTombstoneShadowsGoWithIt) {
  WriteBatch batch;
  Partition partition;
  partition.rows["r"].cells[ElementCellName("s", "a")] = Live(5, "");
  partition.rows["r"].cells[ElementCellName("s", "b")] = Live(20, "");
  partition.rows["r"].cells["s"] = Dead(10);
  storage_codec::AddMutation("t", "p", partition, batch);
  const std::vector<KeyValue> stored = Stored(batch);
  const storage_codec::Decoded decoded = storage_codec::DecodeScan(stored);
  EXPECT_EQ(decoded.obsolete_keys.size(), 1u);  // element a
  EXPECT_EQ(decoded.partition.rows.at("r").cells.count(ElementCellName("s", "a")), 0u);
  const std::vector<std::string> purged = storage_codec::PurgedKeys(decoded, 16).keys;
  EXPECT_EQ(purged.size(), 2u);  // the tombstone, and element a with it
  Partition expected;
  expected.rows["r"].cells[ElementCellName("s", "b")] = Live(20, "");
  EXPECT_EQ(storage_codec::DecodeScan(Without(stored, purged)).partition, expected);
}

TEST(StorageCodecTest, APurgeTakesEachDeletionWithWhatItShadows) {
  WriteBatch batch;
  Partition partition;
  partition.rows["r"].cells["a"] = Live(5, "shadowed");
  partition.rows["r"].cells["b"] = Live(20, "newer");
  storage_codec::AddMutation("t", "p", partition, batch);
  Partition deletion;
  deletion.rows["r"].tombstone = 10;
  deletion.rows["s"].cells["c"] = Dead(12);
  deletion.rows["u"].cells["e"] = Live(13, "expired", /*expiry=*/15, 1);
  storage_codec::AddMutation("t", "p", deletion, batch);
  Partition older;
  older.rows["s"].cells["c"] = Live(11, "deleted");
  older.rows["u"].cells["e"] = Live(2, "older");
  storage_codec::AddMutation("t", "p", older, batch);
  const std::vector<KeyValue> stored = Stored(batch);

  const storage_codec::Decoded decoded = storage_codec::DecodeScan(stored);
  // Before 10, nothing is purged but the obsolete versions.
  std::vector<std::string> purged = storage_codec::PurgedKeys(decoded, 10).keys;
  EXPECT_EQ(purged.size(), decoded.obsolete_keys.size());
  EXPECT_EQ(storage_codec::PurgedKeys(decoded, 10).deletions, 0u);
  Partition after = storage_codec::DecodeScan(Without(stored, purged)).partition;
  EXPECT_EQ(after, decoded.partition);

  EXPECT_EQ(storage_codec::PurgedKeys(decoded, 16).deletions, 3u);
  purged = storage_codec::PurgedKeys(decoded, 16).keys;
  after = storage_codec::DecodeScan(Without(stored, purged)).partition;
  Partition expected;
  expected.rows["r"].cells["b"] = Live(20, "newer");
  EXPECT_EQ(after, expected);
  EXPECT_EQ(purged.size(), stored.size() - 1);
}

// Stored, a partition's range tombstones sort before its rows, decode
// back, make what they shadow obsolete, and are purged with it; those not
// named purgeable (a partition scanned in part) are not.
TEST(StorageCodecTest, RangeTombstonesAreStoredDecodedAndPurgedWithWhatTheyShadow) {
  WriteBatch batch;
  Partition partition;
  partition.rows["a"].cells["x"] = Live(5, "deleted");
  partition.rows["a"].tombstone = 4;
  partition.rows["b"].cells["x"] = Live(5, "deleted");
  partition.rows["z"].cells["x"] = Live(5, "outside");
  partition.rows["b"].cells["y"] = Live(9, "newer");
  storage_codec::AddMutation("t", "p", partition, batch);
  Partition deletion;
  deletion.range_tombstones[ClusteringRange{"", "c"}] = 6;
  deletion.range_tombstones[ClusteringRange{"x", ""}] = 2;
  storage_codec::AddMutation("t", "p", deletion, batch);
  const std::vector<KeyValue> stored = Stored(batch);
  EXPECT_EQ(stored.front().key.substr(0, storage_codec::RangeTombstonePrefix("t", "p").size()),
            storage_codec::RangeTombstonePrefix("t", "p"));
  // They end where the partition's first possible row begins.
  EXPECT_EQ(storage_codec::PrefixEnd(storage_codec::RangeTombstonePrefix("t", "p")),
            storage_codec::RowPrefix("t", "p", ""));
  const std::optional<storage_codec::StoredRow> head = storage_codec::RowOfKey(stored.front().key);
  ASSERT_TRUE(head.has_value());
  EXPECT_TRUE(head->range_tombstones);
  EXPECT_EQ(head->partition_key, "p");

  const storage_codec::Decoded decoded = storage_codec::DecodeScan(stored);
  EXPECT_TRUE(decoded.corrupt_keys.empty());
  EXPECT_EQ(decoded.partition.range_tombstones, deletion.range_tombstones);
  EXPECT_EQ(decoded.obsolete_keys.size(), 3u);  // a's cell and tombstone, b's x
  EXPECT_EQ(decoded.partition.rows.count("a"), 0u);
  EXPECT_EQ(decoded.partition.rows.at("b").cells.count("x"), 0u);
  EXPECT_EQ(decoded.partition.rows.at("z").cells.at("x").value, "outside");

  const storage_codec::Purge purge = storage_codec::PurgedKeys(decoded, 7);
  EXPECT_EQ(purge.deletions, 2u);
  Partition after = storage_codec::DecodeScan(Without(stored, purge.keys)).partition;
  EXPECT_TRUE(after.range_tombstones.empty());
  EXPECT_EQ(after.rows.count("a"), 0u);  // nothing it shadowed comes back
  EXPECT_EQ(after.rows.at("b").cells.count("x"), 0u);
  EXPECT_EQ(after.rows.at("b").cells.at("y").value, "newer");
  const std::set<std::string> none;
  const storage_codec::Purge in_part = storage_codec::PurgedKeys(decoded, 7, &none);
  EXPECT_EQ(in_part.deletions, 0u);
  EXPECT_EQ(storage_codec::DecodeScan(Without(stored, in_part.keys)).partition.range_tombstones,
            deletion.range_tombstones);
}

// What a replica that purged holds is what one that has not serves.
TEST(TombstoneGcTest, ThePurgedViewIsWhatAPurgeLeaves) {
  WriteBatch batch;
  Partition partition;
  partition.rows["r"].tombstone = 10;
  partition.rows["r"].cells["b"] = Live(20, "newer");
  partition.rows["s"].cells["c"] = Dead(12);
  partition.rows["t"].cells["d"] = Live(3, "kept");
  partition.rows["u"].cells["e"] = Live(13, "expired", /*expiry=*/15, 1);
  storage_codec::AddMutation("t", "p", partition, batch);
  const std::vector<KeyValue> stored = Stored(batch);
  const storage_codec::Decoded decoded = storage_codec::DecodeScan(stored);
  for (const Timestamp before : {Timestamp{0}, Timestamp{11}, Timestamp{13}, Timestamp{16}, Timestamp{100}}) {
    Partition view = decoded.partition;
    DropPurgeable(view, before);
    const std::vector<std::string> purged = storage_codec::PurgedKeys(decoded, before).keys;
    EXPECT_EQ(view, storage_codec::DecodeScan(Without(stored, purged)).partition) << "before " << before;
  }
}

TEST(TombstoneGcTest, EachModePurgesWhatItMay) {
  constexpr Timestamp kSecond = 1'000'000;
  const Timestamp now = 100'000 * kSecond;
  TombstoneGc gc;
  gc.gc_grace_seconds = 1000;
  gc.propagation_delay_seconds = 60;
  gc.mode = TombstoneGc::Mode::kTimeout;
  EXPECT_EQ(PurgeBefore(gc, now, 0), now - 1000 * kSecond);
  gc.mode = TombstoneGc::Mode::kRepair;
  EXPECT_EQ(PurgeBefore(gc, now, 0), std::numeric_limits<Timestamp>::min()) << "never repaired: nothing";
  EXPECT_EQ(PurgeBefore(gc, now, now - 10 * kSecond), now - 70 * kSecond);
  // A repair dated after now (another node's clock) purges nothing newer than now.
  EXPECT_EQ(PurgeBefore(gc, now, now + 3600 * kSecond), now);
  gc.mode = TombstoneGc::Mode::kImmediate;
  EXPECT_EQ(PurgeBefore(gc, now, 0), now);
  gc.mode = TombstoneGc::Mode::kDisabled;
  EXPECT_EQ(PurgeBefore(gc, now, now), std::numeric_limits<Timestamp>::min());
  for (const char* name : {"timeout", "repair", "immediate", "disabled"}) {
    const absl::StatusOr<TombstoneGc::Mode> mode = ParseTombstoneGcMode(name);
    ASSERT_TRUE(mode.ok());
    EXPECT_STREQ(TombstoneGcModeName(*mode), name);
  }
  EXPECT_FALSE(ParseTombstoneGcMode("sometimes").ok());
}

}  // namespace
}  // namespace charybdis
