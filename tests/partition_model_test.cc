// The reference model of a partition (sim/model/partition_model.h): last
// write wins, tombstones, row markers, TTL against an uncertain moment,
// conditions, slices, and which read results it admits.

#include "sim/model/partition_model.h"

#include <gtest/gtest.h>

namespace charybdis::sim::model {
namespace {

constexpr int64_t kSecond = 1'000'000;

Moment At(int64_t us) { return Moment{us, us}; }
Key K(int64_t a) { return Key{Value{a}}; }
Key K(int64_t a, int64_t b) { return Key{Value{a}, Value{b}}; }

Write Insert(Key clustering, std::map<std::string, std::optional<Value>> columns, int64_t ttl_seconds = 0) {
  return Write{Write::Kind::kInsert, std::move(clustering), std::move(columns), ttl_seconds};
}
Write Update(Key clustering, std::map<std::string, std::optional<Value>> columns, int64_t ttl_seconds = 0) {
  return Write{Write::Kind::kUpdate, std::move(clustering), std::move(columns), ttl_seconds};
}
Write DeleteRow(Key clustering) { return Write{Write::Kind::kDeleteRow, std::move(clustering), {}, 0}; }
Write DeleteColumn(Key clustering, const std::string& column) {
  return Write{Write::Kind::kDeleteColumns, std::move(clustering), {{column, std::nullopt}}, 0};
}

// The value of `column` in the only row of the partition's read at `now`.
std::optional<Value> ReadOne(const PartitionModel& partition, const std::string& column, Moment now) {
  const std::vector<ExpectedRow> rows = partition.Read(Slice{}, now);
  if (rows.empty()) return std::nullopt;
  EXPECT_EQ(rows.size(), 1u);
  auto it = rows[0].columns.find(column);
  if (it == rows[0].columns.end()) return std::nullopt;
  EXPECT_EQ(it->second.liveness, Liveness::kLive);
  return it->second.value;
}

// Rows (1, 1) to (2, 2) by (a, b DESC); a range deletion of a = 1 and
// b >= 2 (in the table's order: from the prefix (1) to (1, 2)) at 20, and
// of the partition at 5.
TEST(PartitionModelTest, ARangeDeletionShadowsTheRowsOfItsSliceWrittenAtOrBeforeIt) {
  PartitionModel partition({false, true});
  for (int64_t a = 1; a <= 2; a++) {
    for (int64_t b = 1; b <= 2; b++) partition.Apply(Insert(K(a, b), {{"v", Value{a * 10 + b}}}), 10, At(0));
  }
  Write range;
  range.kind = Write::Kind::kDeleteRange;
  range.range.low = Key{Value{int64_t{1}}};
  range.range.high = K(1, 2);
  partition.Apply(range, 20, At(0));
  Write whole;
  whole.kind = Write::Kind::kDeleteRange;
  partition.Apply(whole, 5, At(0));
  EXPECT_EQ(partition.Exists(K(1, 2), At(1)), Liveness::kDead);
  EXPECT_EQ(partition.Exists(K(1, 1), At(1)), Liveness::kLive);
  EXPECT_EQ(partition.Exists(K(2, 2), At(1)), Liveness::kLive);
  partition.Apply(Update(K(1, 2), {{"v", Value{int64_t{7}}}}), 21, At(0));  // after it: lives
  EXPECT_EQ(partition.Exists(K(1, 2), At(1)), Liveness::kLive);
  partition.Apply(whole, 30, At(0));
  EXPECT_TRUE(partition.Read(Slice{}, At(1)).empty());
}

TEST(PartitionModelTest, LastWriteWinsWithScyllasTieBreaks) {
  PartitionModel partition({false});
  partition.Apply(Update(K(1), {{"v", Value{int64_t{5}}}}), 20, At(0));
  partition.Apply(Update(K(1), {{"v", Value{int64_t{9}}}}), 10, At(0));
  EXPECT_EQ(ReadOne(partition, "v", At(0)), Value{int64_t{5}}) << "the older write lost";
  partition.Apply(Update(K(1), {{"v", Value{int64_t{3}}}}), 20, At(0));
  EXPECT_EQ(ReadOne(partition, "v", At(0)), Value{int64_t{5}}) << "a tie goes to the larger value";
  partition.Apply(Update(K(1), {{"v", Value{int64_t{1}}}}, 100), 20, At(0));
  EXPECT_EQ(ReadOne(partition, "v", At(0)), Value{int64_t{1}}) << "a tie goes to the expiring cell";
  partition.Apply(DeleteColumn(K(1), "v"), 20, At(0));
  EXPECT_EQ(ReadOne(partition, "v", At(0)), std::nullopt) << "a tie goes to the tombstone";
  EXPECT_TRUE(Wins(Version{2, Value{int64_t{1}}, {}}, Version{1, std::nullopt, {}}));
  EXPECT_FALSE(Wins(Version{1, Value{int64_t{1}}, {}}, Version{1, Value{int64_t{1}}, {}}));
}

TEST(PartitionModelTest, ARowTombstoneShadowsWhatWasWrittenAtOrBeforeIt) {
  PartitionModel partition({false});
  partition.Apply(Insert(K(1), {{"a", Value{int64_t{1}}}}), 10, At(0));
  partition.Apply(Update(K(1), {{"b", Value{int64_t{2}}}}), 30, At(0));
  partition.Apply(DeleteRow(K(1)), 20, At(0));
  std::vector<ExpectedRow> rows = partition.Read(Slice{}, At(0));
  ASSERT_EQ(rows.size(), 1u) << "b was written after the delete";
  EXPECT_EQ(rows[0].columns.count("a"), 0u);
  EXPECT_EQ(rows[0].columns.count("b"), 1u);
  partition.Apply(DeleteRow(K(1)), 30, At(0));
  EXPECT_TRUE(partition.Read(Slice{}, At(0)).empty()) << "a tie goes to the row tombstone";
  partition.Apply(DeleteRow(K(1)), 5, At(0));
  EXPECT_EQ(partition.rows().at(K(1)).deleted_at_us, 30) << "an older row tombstone changes nothing";
}

TEST(PartitionModelTest, AnInsertMakesTheRowExistAnUpdateToNullDoesNot) {
  PartitionModel partition({false});
  partition.Apply(Update(K(1), {{"v", std::nullopt}}), 10, At(0));
  EXPECT_EQ(partition.Exists(K(1), At(0)), Liveness::kDead);
  partition.Apply(Insert(K(2), {{"v", std::nullopt}}), 10, At(0));
  EXPECT_EQ(partition.Exists(K(2), At(0)), Liveness::kLive) << "the row marker";
  partition.Apply(DeleteColumn(K(2), "v"), 11, At(0));
  EXPECT_EQ(partition.Exists(K(2), At(0)), Liveness::kLive) << "a column delete leaves the marker";
}

TEST(PartitionModelTest, ATtlExpiresAtAnUncertainMoment) {
  PartitionModel partition({false});
  // Written somewhere in [0, 1 s]: expires somewhere in [10 s, 11 s].
  partition.Apply(Insert(K(1), {{"v", Value{int64_t{7}}}}, 10), 1, Moment{0, kSecond});
  EXPECT_EQ(partition.Exists(K(1), At(9 * kSecond)), Liveness::kLive);
  EXPECT_EQ(partition.Exists(K(1), At(10 * kSecond + 5)), Liveness::kMaybe);
  EXPECT_EQ(partition.Exists(K(1), Moment{9 * kSecond, 12 * kSecond}), Liveness::kMaybe);
  EXPECT_EQ(partition.Exists(K(1), At(11 * kSecond)), Liveness::kDead);
  // An UPDATE's TTL is the cells', not the row's.
  partition.Apply(Update(K(2), {{"v", Value{int64_t{7}}}}, 10), 1, At(0));
  partition.Apply(Insert(K(2), {{"w", Value{int64_t{8}}}}), 1, At(0));
  const std::vector<ExpectedRow> rows = partition.Read(Slice{}, At(20 * kSecond));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].clustering, K(2));
  EXPECT_EQ(rows[0].columns.count("v"), 0u);
}

TEST(PartitionModelTest, ConditionsOnRowsColumnsAndNulls) {
  PartitionModel partition({false});
  partition.Apply(Insert(K(1), {{"v", Value{int64_t{5}}}}), 1, At(0));
  auto holds = [&](RowCondition condition) { return partition.Holds(condition, At(0)); };
  EXPECT_EQ(holds({RowCondition::Kind::kIfNotExists, K(1), {}}), Liveness::kDead);
  EXPECT_EQ(holds({RowCondition::Kind::kIfNotExists, K(2), {}}), Liveness::kLive);
  EXPECT_EQ(holds({RowCondition::Kind::kIfExists, K(1), {}}), Liveness::kLive);
  using Op = Condition::Op;
  const Value five{int64_t{5}}, six{int64_t{6}};
  EXPECT_EQ(holds({RowCondition::Kind::kColumns, K(1), {{"v", Op::kEq, five}}}), Liveness::kLive);
  EXPECT_EQ(holds({RowCondition::Kind::kColumns, K(1), {{"v", Op::kLt, six}, {"v", Op::kGe, five}}}), Liveness::kLive);
  EXPECT_EQ(holds({RowCondition::Kind::kColumns, K(1), {{"v", Op::kLt, six}, {"v", Op::kGt, five}}}), Liveness::kDead);
  // A null column (or a row that does not exist) satisfies only !=.
  EXPECT_EQ(holds({RowCondition::Kind::kColumns, K(1), {{"w", Op::kNe, five}}}), Liveness::kLive);
  EXPECT_EQ(holds({RowCondition::Kind::kColumns, K(1), {{"w", Op::kLe, five}}}), Liveness::kDead);
  EXPECT_EQ(holds({RowCondition::Kind::kColumns, K(9), {{"v", Op::kEq, five}}}), Liveness::kDead);
  EXPECT_EQ(holds({RowCondition::Kind::kColumns, K(9), {{"v", Op::kNe, five}}}), Liveness::kLive);
  // A cell that may have expired: conditions that differ on null are maybe.
  partition.Apply(Update(K(3), {{"v", five}}, 10), 1, Moment{0, kSecond});
  const Moment expiring{10 * kSecond, 10 * kSecond};
  EXPECT_EQ(partition.Holds({RowCondition::Kind::kColumns, K(3), {{"v", Op::kEq, five}}}, expiring), Liveness::kMaybe);
  EXPECT_EQ(partition.Holds({RowCondition::Kind::kColumns, K(3), {{"v", Op::kEq, six}}}, expiring), Liveness::kDead);
  EXPECT_EQ(partition.Holds({RowCondition::Kind::kIfNotExists, K(3), {}}, expiring), Liveness::kMaybe);
}

TEST(PartitionModelTest, SlicesFollowTheClusteringOrderAndPrefixes) {
  PartitionModel partition({false, true});  // (a ASC, b DESC)
  for (int64_t a = 1; a <= 3; a++) {
    for (int64_t b = 1; b <= 3; b++) partition.Apply(Insert(K(a, b), {}), 1, At(0));
  }
  auto keys = [&](const Slice& slice) {
    std::vector<Key> keys;
    for (const ExpectedRow& row : partition.Read(slice, At(0))) keys.push_back(row.clustering);
    return keys;
  };
  EXPECT_EQ(keys(Slice{K(2), true, K(2), true}), (std::vector<Key>{K(2, 3), K(2, 2), K(2, 1)}));
  EXPECT_EQ(keys(Slice{K(2, 2), false, K(3), false}), (std::vector<Key>{K(2, 1)}));
  Slice reversed{K(3, 2), true, std::nullopt, true, true};
  EXPECT_EQ(keys(reversed), (std::vector<Key>{K(3, 1), K(3, 2)}));
}

ObservedRow Observed(Key clustering, std::optional<int64_t> v) {
  ObservedRow row{std::move(clustering), {}};
  row.columns["v"] = v ? std::optional<Value>(Value{*v}) : std::nullopt;
  return row;
}

TEST(PartitionModelTest, AdmitsTheReadsTheModelAllowsAndSaysWhyNot) {
  PartitionModel partition({false});
  partition.Apply(Insert(K(1), {{"v", Value{int64_t{1}}}}), 1, At(0));
  partition.Apply(Insert(K(2), {{"v", Value{int64_t{2}}}}, 10), 1, At(0));  // maybe gone at 10 s
  partition.Apply(Insert(K(3), {{"v", Value{int64_t{3}}}}), 1, At(0));
  const std::vector<ExpectedRow> expected = partition.Read(Slice{}, Moment{9 * kSecond, 11 * kSecond});
  ASSERT_EQ(expected.size(), 3u);
  EXPECT_EQ(Admits(expected, 0, {Observed(K(1), 1), Observed(K(2), 2), Observed(K(3), 3)}), std::nullopt);
  EXPECT_EQ(Admits(expected, 0, {Observed(K(1), 1), Observed(K(3), 3)}), std::nullopt);
  EXPECT_EQ(Admits(expected, 2, {Observed(K(1), 1), Observed(K(3), 3)}), std::nullopt);
  EXPECT_EQ(Admits(expected, 1, {Observed(K(1), 1)}), std::nullopt);
  EXPECT_NE(Admits(expected, 0, {Observed(K(1), 1)}), std::nullopt) << "row 3 is missing";
  EXPECT_NE(Admits(expected, 0, {Observed(K(3), 3), Observed(K(1), 1)}), std::nullopt) << "out of order";
  EXPECT_NE(Admits(expected, 0, {Observed(K(1), 1), Observed(K(3), 4)}), std::nullopt) << "a wrong value";
  EXPECT_NE(Admits(expected, 0, {Observed(K(1), std::nullopt), Observed(K(3), 3)}), std::nullopt)
      << "a live value read as null";
  EXPECT_NE(Admits(expected, 0, {Observed(K(1), 1), Observed(K(3), 3), Observed(K(4), 4)}), std::nullopt)
      << "a row that never was";
  EXPECT_NE(Admits(expected, 1, {Observed(K(1), 1), Observed(K(3), 3)}), std::nullopt) << "over the limit";
  const std::optional<std::string> why = Admits(expected, 0, {Observed(K(1), 1), Observed(K(3), 4)});
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why, "row (3) column v read 4, the model allows 3");
}

}  // namespace
}  // namespace charybdis::sim::model
