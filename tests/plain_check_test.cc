// The plain-read checker (sim/model/plain_check.h): reads the model allows
// pass, and each kind of wrong one fails: an acknowledged quorum write
// missed, an older timestamp winning, a deleted or expired row returned, a
// value nobody wrote, a row a range deletion covers, rows out of order or twice, a row dropped before a
// LIMIT, a row returned with nothing live, selected or not, a WRITETIME
// that is not the version's, a set missing an element it must hold or
// holding one no write left, a COUNT(*)
// below the rows that must exist or above those that can.

#include "sim/model/plain_check.h"

#include <gtest/gtest.h>

namespace charybdis::sim::model {
namespace {

constexpr int64_t kSecond = 1'000'000;
constexpr uint32_t kReplicationFactor = 3;
constexpr uint32_t kQuorum = 2;

Key K(int64_t row) { return Key{Value{row}}; }

PlainOp Op(PlainOp::Kind kind, int64_t call_us, int64_t return_us, uint32_t replicas) {
  PlainOp op;
  op.kind = kind;
  op.partition = "p";
  op.call_us = call_us;
  op.return_us = return_us;
  op.clock = Moment{call_us, return_us};
  op.replicas = replicas;
  return op;
}

PlainOp Insert(int64_t call_us, int64_t return_us, int64_t row, int64_t v, int64_t timestamp_us,
               uint32_t replicas = kQuorum, int64_t ttl_seconds = 0) {
  PlainOp op = Op(PlainOp::Kind::kWrite, call_us, return_us, replicas);
  op.write = Write{Write::Kind::kInsert, K(row), {{"v", Value{v}}}, ttl_seconds};
  op.timestamp_us = timestamp_us;
  return op;
}

PlainOp DeleteRow(int64_t call_us, int64_t return_us, int64_t row, int64_t timestamp_us) {
  PlainOp op = Op(PlainOp::Kind::kWrite, call_us, return_us, kQuorum);
  op.write = Write{Write::Kind::kDeleteRow, K(row), {}, 0};
  op.timestamp_us = timestamp_us;
  return op;
}

// A DELETE of rows [low, high] (nullopt: open), or of the partition.
PlainOp DeleteRange(int64_t call_us, int64_t return_us, std::optional<int64_t> low, std::optional<int64_t> high,
                    int64_t timestamp_us) {
  PlainOp op = Op(PlainOp::Kind::kWrite, call_us, return_us, kQuorum);
  op.write.kind = Write::Kind::kDeleteRange;
  if (low) op.write.range.low = K(*low);
  if (high) op.write.range.high = K(*high);
  op.timestamp_us = timestamp_us;
  return op;
}

ObservedRow Row(int64_t row, std::optional<int64_t> v) {
  return ObservedRow{K(row), {{"v", v ? std::optional<Value>(Value{*v}) : std::nullopt}}};
}

PlainOp Read(int64_t call_us, int64_t return_us, std::vector<ObservedRow> rows, uint32_t replicas = kQuorum,
             Slice slice = {}) {
  PlainOp op = Op(PlainOp::Kind::kRead, call_us, return_us, replicas);
  op.rows = std::move(rows);
  op.slice = slice;
  return op;
}

bool Admitted(const std::vector<PlainOp>& history, std::vector<bool> descending = {false}) {
  const PlainCheckResult result = CheckPlainReads(history, descending, kReplicationFactor);
  if (!result.admitted) std::cerr << result.detail << "\n";
  return result.admitted;
}

PlainOp Count(int64_t call_us, int64_t return_us, int64_t count) {
  PlainOp op = Op(PlainOp::Kind::kRead, call_us, return_us, kQuorum);
  op.count = count;
  return op;
}

// Rows 1 and 2 were written and acknowledged at QUORUM, row 2 deleted
// since; row 3's write is in flight: 1 must exist, 3 may.
TEST(PlainCheckTest, ACountLiesBetweenTheRowsThatMustAndThatMayExist) {
  const std::vector<PlainOp> writes = {Insert(0, 10, 1, 7, 100), Insert(0, 10, 2, 8, 100), DeleteRow(20, 30, 2, 200),
                                       Insert(35, 100, 3, 9, 300)};
  for (int64_t counted : {-1, 0, 1, 2, 3}) {
    std::vector<PlainOp> history = writes;
    history.push_back(Count(40, 50, counted));
    EXPECT_EQ(Admitted(history), counted == 1 || counted == 2) << counted;
  }
}

TEST(PlainCheckTest, AQuorumReadSeesAnAcknowledgedQuorumWrite) {
  const PlainOp first = Insert(0, 10, 1, 7, 100);
  const PlainOp second = Insert(20, 30, 1, 8, 200);
  EXPECT_TRUE(Admitted({first, second, Read(40, 50, {Row(1, 8)})}));
  EXPECT_FALSE(Admitted({first, second, Read(40, 50, {Row(1, 7)})}));
  EXPECT_FALSE(Admitted({first, second, Read(40, 50, {})}));
}

TEST(PlainCheckTest, AWriteAtOneMayBeMissedByAQuorumRead) {
  const PlainOp first = Insert(0, 10, 1, 7, 100);
  const PlainOp second = Insert(20, 30, 1, 8, 200, 1);
  EXPECT_TRUE(Admitted({first, second, Read(40, 50, {Row(1, 7)})}));
  EXPECT_TRUE(Admitted({first, second, Read(40, 50, {Row(1, 8)})}));
  // ALL reads meet a write at ONE.
  EXPECT_FALSE(Admitted({first, second, Read(40, 50, {Row(1, 7)}, 3)}));
}

TEST(PlainCheckTest, AConcurrentWriteMayOrMayNotBeSeen) {
  const PlainOp first = Insert(0, 10, 1, 7, 100);
  const PlainOp concurrent = Insert(35, 60, 1, 8, 200);
  EXPECT_TRUE(Admitted({first, concurrent, Read(40, 50, {Row(1, 7)})}));
  EXPECT_TRUE(Admitted({first, concurrent, Read(40, 50, {Row(1, 8)})}));
  // A write sent after the read returned cannot be in it.
  const PlainOp later = Insert(55, 60, 1, 9, 300);
  EXPECT_FALSE(Admitted({first, later, Read(40, 50, {Row(1, 9)})}));
}

TEST(PlainCheckTest, TheHigherTimestampWinsWhateverTheOrderOfWrites) {
  const PlainOp newer = Insert(0, 10, 1, 7, 500);
  const PlainOp older_sent_later = Insert(20, 30, 1, 8, 100);
  EXPECT_TRUE(Admitted({newer, older_sent_later, Read(40, 50, {Row(1, 7)})}));
  EXPECT_FALSE(Admitted({newer, older_sent_later, Read(40, 50, {Row(1, 8)})}));
}

TEST(PlainCheckTest, ADeletedRowIsNotReturned) {
  const PlainOp insert = Insert(0, 10, 1, 7, 100);
  EXPECT_FALSE(Admitted({insert, DeleteRow(20, 30, 1, 200), Read(40, 50, {Row(1, 7)})}));
  EXPECT_TRUE(Admitted({insert, DeleteRow(20, 30, 1, 200), Read(40, 50, {})}));
  // A tombstone older than the insert shadows nothing.
  EXPECT_FALSE(Admitted({insert, DeleteRow(20, 30, 1, 50), Read(40, 50, {})}));
}

TEST(PlainCheckTest, ARangeDeletionDeletesTheRowsOfItsSliceOnly) {
  std::vector<PlainOp> rows;
  for (int64_t row = 1; row <= 4; row++) rows.push_back(Insert(0, 10, row, row, 100));
  const auto with = [&rows](std::vector<PlainOp> more) {
    std::vector<PlainOp> history = rows;
    history.insert(history.end(), more.begin(), more.end());
    return history;
  };
  const PlainOp middle = DeleteRange(20, 30, 2, 3, 200);
  EXPECT_TRUE(Admitted(with({middle, Read(40, 50, {Row(1, 1), Row(4, 4)})})));
  EXPECT_FALSE(Admitted(with({middle, Read(40, 50, {Row(1, 1), Row(2, 2), Row(4, 4)})})));
  EXPECT_FALSE(Admitted(with({middle, Read(40, 50, {Row(1, 1)})})));
  // Older than the rows, it deletes none; in flight, it may or may not be seen.
  EXPECT_FALSE(Admitted(with({DeleteRange(20, 30, 2, 3, 50), Read(40, 50, {Row(1, 1), Row(4, 4)})})));
  EXPECT_TRUE(Admitted(with({DeleteRange(20, 60, 2, 3, 200), Read(40, 50, {Row(1, 1), Row(4, 4)})})));
  EXPECT_TRUE(Admitted(
      with({DeleteRange(20, 60, 2, 3, 200), Read(40, 50, {Row(1, 1), Row(2, 2), Row(3, 3), Row(4, 4)})})));
  // The whole partition, and a row written after it.
  const PlainOp partition = DeleteRange(20, 30, std::nullopt, std::nullopt, 200);
  EXPECT_TRUE(Admitted(with({partition, Read(40, 50, {})})));
  EXPECT_FALSE(Admitted(with({partition, Read(40, 50, {Row(3, 3)})})));
  EXPECT_TRUE(Admitted(with({partition, Insert(32, 35, 3, 9, 300), Read(40, 50, {Row(3, 9)})})));
  EXPECT_FALSE(Admitted(with({partition, Count(40, 50, 1)})));
  EXPECT_TRUE(Admitted(with({partition, Count(40, 50, 0)})));
}

TEST(PlainCheckTest, AnExpiredRowIsNotReturnedAndOneNearItsExpiryMayBe) {
  const PlainOp insert = Insert(0, 10, 1, 7, 100, kQuorum, 1);
  EXPECT_TRUE(Admitted({insert, Read(20, 30, {Row(1, 7)})}));
  EXPECT_FALSE(Admitted({insert, Read(20, 30, {})}));
  EXPECT_TRUE(Admitted({insert, Read(kSecond + 5, kSecond + 6, {Row(1, 7)})}));
  EXPECT_TRUE(Admitted({insert, Read(kSecond + 5, kSecond + 6, {})}));
  EXPECT_FALSE(Admitted({insert, Read(2 * kSecond, 2 * kSecond + 1, {Row(1, 7)})}));
}

TEST(PlainCheckTest, AValueNoWriteLeftThereFails) {
  const PlainOp insert = Insert(0, 10, 1, 7, 100);
  EXPECT_FALSE(Admitted({insert, Read(20, 30, {Row(1, 6)})}));
  EXPECT_FALSE(Admitted({insert, Read(20, 30, {Row(1, 7), Row(2, 7)})}));
  PlainOp failed = Insert(12, 15, 1, 9, 200);
  failed.outcome = LwtOp::Outcome::kFail;
  EXPECT_FALSE(Admitted({insert, failed, Read(20, 30, {Row(1, 9)})}));
  PlainOp unknown = failed;
  unknown.outcome = LwtOp::Outcome::kInfo;
  EXPECT_TRUE(Admitted({insert, unknown, Read(20, 30, {Row(1, 9)})}));
  EXPECT_TRUE(Admitted({insert, unknown, Read(20, 30, {Row(1, 7)})}));
}

TEST(PlainCheckTest, RowsComeInTheSlicesOrderEachOnce) {
  const std::vector<PlainOp> writes = {Insert(0, 10, 1, 7, 100), Insert(0, 10, 2, 8, 100)};
  auto with = [&](PlainOp read) {
    std::vector<PlainOp> history = writes;
    history.push_back(std::move(read));
    return history;
  };
  EXPECT_TRUE(Admitted(with(Read(20, 30, {Row(1, 7), Row(2, 8)}))));
  EXPECT_FALSE(Admitted(with(Read(20, 30, {Row(2, 8), Row(1, 7)}))));
  EXPECT_FALSE(Admitted(with(Read(20, 30, {Row(1, 7), Row(1, 7), Row(2, 8)}))));
  // DESC clustering order reads 2 first.
  EXPECT_TRUE(Admitted(with(Read(20, 30, {Row(2, 8), Row(1, 7)})), {true}));
  Slice reversed;
  reversed.reversed = true;
  EXPECT_TRUE(Admitted(with(Read(20, 30, {Row(2, 8), Row(1, 7)}, kQuorum, reversed))));
}

TEST(PlainCheckTest, ALimitCutsOnlyAfterTheRowsItReturned) {
  const std::vector<PlainOp> writes = {Insert(0, 10, 1, 7, 100), Insert(0, 10, 2, 8, 100),
                                       Insert(0, 10, 3, 9, 100)};
  Slice limited;
  limited.limit = 2;
  auto with = [&](PlainOp read) {
    std::vector<PlainOp> history = writes;
    history.push_back(std::move(read));
    return history;
  };
  EXPECT_TRUE(Admitted(with(Read(20, 30, {Row(1, 7), Row(2, 8)}, kQuorum, limited))));
  EXPECT_FALSE(Admitted(with(Read(20, 30, {Row(1, 7), Row(3, 9)}, kQuorum, limited))));
  EXPECT_FALSE(Admitted(with(Read(20, 30, {Row(1, 7), Row(2, 8), Row(3, 9)}, kQuorum, limited))));
  Slice from_two;
  from_two.low = K(2);
  EXPECT_TRUE(Admitted(with(Read(20, 30, {Row(2, 8), Row(3, 9)}, kQuorum, from_two))));
  EXPECT_FALSE(Admitted(with(Read(20, 30, {Row(1, 7), Row(2, 8), Row(3, 9)}, kQuorum, from_two))));
}

TEST(PlainCheckTest, AnInListReadsOnlyItsRowsAndAllOfThem) {
  const std::vector<PlainOp> writes = {Insert(0, 10, 1, 7, 100), Insert(0, 10, 2, 8, 100),
                                       Insert(0, 10, 3, 9, 100)};
  Slice in;
  in.first_in = std::vector<Value>{Value{int64_t{3}}, Value{int64_t{1}}};
  auto with = [&](PlainOp read) {
    std::vector<PlainOp> history = writes;
    history.push_back(std::move(read));
    return history;
  };
  EXPECT_TRUE(Admitted(with(Read(20, 30, {Row(1, 7), Row(3, 9)}, kQuorum, in))));
  EXPECT_FALSE(Admitted(with(Read(20, 30, {Row(1, 7), Row(2, 8), Row(3, 9)}, kQuorum, in))));
  EXPECT_FALSE(Admitted(with(Read(20, 30, {Row(3, 9)}, kQuorum, in))));
}

TEST(PlainCheckTest, AColumnSetToNullReadsNullAndTheRowLivesOnItsMarker) {
  const PlainOp insert = Insert(0, 10, 1, 7, 100);
  PlainOp set_null = Op(PlainOp::Kind::kWrite, 20, 30, kQuorum);
  set_null.write = Write{Write::Kind::kUpdate, K(1), {{"v", std::nullopt}}, 0};
  set_null.timestamp_us = 200;
  EXPECT_TRUE(Admitted({insert, set_null, Read(40, 50, {Row(1, std::nullopt)})}));
  EXPECT_FALSE(Admitted({insert, set_null, Read(40, 50, {})}));
  EXPECT_FALSE(Admitted({insert, set_null, Read(40, 50, {Row(1, 7)})}));
  // An UPDATE makes no marker: with its one cell gone, the row is gone.
  PlainOp update = set_null;
  update.write.columns["v"] = Value{int64_t{5}};
  update.timestamp_us = 50;
  EXPECT_FALSE(Admitted({update, set_null, Read(40, 50, {Row(1, std::nullopt)})}));
  EXPECT_TRUE(Admitted({update, set_null, Read(40, 50, {})}));
}

// A read that selected some columns only: a row returned with them all
// null lives by a column it did not select, or its marker; with none of
// them able to live, it fails as before.
TEST(PlainCheckTest, ARowReadByOtherColumnsLivesByTheOnesNotSelected) {
  PlainOp update = Op(PlainOp::Kind::kWrite, 0, 10, kQuorum);
  update.write = Write{Write::Kind::kUpdate, K(1), {{"w", Value{int64_t{5}}}}, 0};
  update.timestamp_us = 100;
  EXPECT_TRUE(Admitted({update, Read(20, 30, {Row(1, std::nullopt)})})) << "v selected, w live";
  ObservedRow only_key{K(1), {}};
  EXPECT_TRUE(Admitted({update, Read(20, 30, {only_key})})) << "only the clustering key selected";
  PlainOp drop_w = update;
  drop_w.write.columns["w"] = std::nullopt;
  drop_w.timestamp_us = 200;
  EXPECT_FALSE(Admitted({update, drop_w, Read(220, 230, {Row(1, std::nullopt)})})) << "nothing lives";
}

// A value read with its WRITETIME must come from a write of that
// timestamp; a null read has none.
TEST(PlainCheckTest, AWritetimeIsTheTimestampOfTheVersionRead) {
  const PlainOp first = Insert(0, 10, 1, 7, 100);
  const PlainOp second = Insert(20, 30, 1, 8, 200);
  ObservedRow read_second = Row(1, 8);
  read_second.written_at_us["v"] = 200;
  EXPECT_TRUE(Admitted({first, second, Read(40, 50, {read_second})}));
  read_second.written_at_us["v"] = 100;
  EXPECT_FALSE(Admitted({first, second, Read(40, 50, {read_second})})) << "8 was written at 200";
  ObservedRow in_flight = Row(1, 7);
  in_flight.written_at_us["v"] = 100;
  EXPECT_TRUE(Admitted({first, Insert(20, 60, 1, 8, 200), Read(40, 50, {in_flight})}));
  ObservedRow null_with_time = Row(1, std::nullopt);
  null_with_time.written_at_us["v"] = 100;
  EXPECT_FALSE(Admitted({first, DeleteRow(20, 30, 1, 150), Insert(32, 35, 1, 9, 160), Read(40, 50, {null_with_time})}));
}

}  // namespace
}  // namespace charybdis::sim::model

namespace charybdis::sim::model {
namespace {

// A write of set column s of row 1: elements added or removed, or the set
// whole (its tombstone a microsecond before the write) or deleted.
PlainOp SetWriteOf(int64_t call_us, int64_t return_us, int64_t timestamp_us, SetWrite change,
                   uint32_t replicas = kQuorum) {
  PlainOp op = Op(PlainOp::Kind::kWrite, call_us, return_us, replicas);
  op.write.kind = change.whole == SetWrite::Whole::kDelete ? Write::Kind::kDeleteColumns : Write::Kind::kUpdate;
  op.write.clustering = K(1);
  op.write.sets["s"] = std::move(change);
  op.timestamp_us = timestamp_us;
  return op;
}

ObservedRow SetRow(std::vector<int64_t> elements) {
  ObservedRow row{K(1), {}, {}, {}};
  for (int64_t element : elements) row.sets["s"].push_back(Value{element});
  return row;
}

std::vector<Value> Values(std::vector<int64_t> numbers) { return std::vector<Value>(numbers.begin(), numbers.end()); }

// Concurrent additions both stay; a set written whole drops what came
// before it and keeps what it adds; a deletion wins a tie with an addition.
TEST(PlainCheckTest, ASetHoldsEveryElementItMustAndNoneItCannot) {
  const PlainOp add_1 = SetWriteOf(0, 10, 100, {SetWrite::Whole::kNone, Values({1}), {}});
  const PlainOp add_2 = SetWriteOf(0, 10, 100, {SetWrite::Whole::kNone, Values({2}), {}});
  EXPECT_TRUE(Admitted({add_1, add_2, Read(20, 30, {SetRow({1, 2})})}));
  EXPECT_FALSE(Admitted({add_1, add_2, Read(20, 30, {SetRow({1})})}));
  EXPECT_FALSE(Admitted({add_1, add_2, Read(20, 30, {SetRow({1, 2, 3})})}));

  const PlainOp replace = SetWriteOf(40, 50, 200, {SetWrite::Whole::kReplace, Values({3}), {}});
  EXPECT_TRUE(Admitted({add_1, add_2, replace, Read(60, 70, {SetRow({3})})}));
  EXPECT_FALSE(Admitted({add_1, add_2, replace, Read(60, 70, {SetRow({1, 3})})}));
  // An addition at the replacement's own time outlives its tombstone.
  const PlainOp add_at_200 = SetWriteOf(40, 50, 200, {SetWrite::Whole::kNone, Values({4}), {}});
  EXPECT_TRUE(Admitted({add_1, replace, add_at_200, Read(60, 70, {SetRow({3, 4})})}));
  EXPECT_FALSE(Admitted({add_1, replace, add_at_200, Read(60, 70, {SetRow({3})})}));

  const PlainOp remove_3 = SetWriteOf(80, 90, 300, {SetWrite::Whole::kNone, {}, Values({3})});
  EXPECT_TRUE(Admitted({replace, remove_3, Read(100, 110, {})}));  // a row only its elements kept
  const PlainOp delete_at_200 = SetWriteOf(80, 90, 200, {SetWrite::Whole::kDelete, {}, {}});
  EXPECT_TRUE(Admitted({replace, add_at_200, delete_at_200, Read(100, 110, {})}));
  EXPECT_FALSE(Admitted({replace, add_at_200, delete_at_200, Read(100, 110, {SetRow({4})})}));
  // A set read beside other columns: an element in flight may or may not show.
  const PlainOp in_flight = SetWriteOf(95, 200, 400, {SetWrite::Whole::kNone, Values({5}), {}});
  EXPECT_TRUE(Admitted({replace, in_flight, Read(100, 110, {SetRow({3, 5})})}));
  EXPECT_TRUE(Admitted({replace, in_flight, Read(100, 110, {SetRow({3})})}));
}

}  // namespace
}  // namespace charybdis::sim::model
