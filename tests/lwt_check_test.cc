// The LWT checker against the reference model (sim/model/lwt_check.h):
// histories known to be right pass, and each kind of wrong one fails: a
// condition applied twice, a wrong current row, a serial read that misses
// a committed write or sees an expired one, an IF EXISTS applied on an
// absent row or refused on a present one.

#include "sim/model/lwt_check.h"

#include <gtest/gtest.h>

namespace charybdis::sim::model {
namespace {

constexpr int64_t kSecond = 1'000'000;

Key K(int64_t row) { return Key{Value{row}}; }

LwtStatement InsertIfNotExists(int64_t row, int64_t v, int64_t ttl_seconds = 0) {
  return LwtStatement{RowCondition{RowCondition::Kind::kIfNotExists, K(row), {}},
                      Write{Write::Kind::kInsert, K(row), {{"v", Value{v}}}, ttl_seconds}};
}
LwtStatement UpdateIf(int64_t row, int64_t expected, int64_t v) {
  return LwtStatement{RowCondition{RowCondition::Kind::kColumns, K(row), {{"v", Condition::Op::kEq, Value{expected}}}},
                      Write{Write::Kind::kUpdate, K(row), {{"v", Value{v}}}, 0}};
}

LwtStatement UpdateIfExists(int64_t row, int64_t v) {
  return LwtStatement{RowCondition{RowCondition::Kind::kIfExists, K(row), {}},
                      Write{Write::Kind::kUpdate, K(row), {{"v", Value{v}}}, 0}};
}

ObservedRow Row(int64_t row, int64_t v) { return ObservedRow{K(row), {{"v", Value{v}}}}; }

LwtOp Conditional(uint64_t process, int64_t call_us, int64_t return_us, std::vector<LwtStatement> statements,
                  bool applied, std::vector<ObservedRow> current = {}) {
  LwtOp op;
  op.partition = "p";
  op.process = process;
  op.call_us = call_us;
  op.return_us = return_us;
  op.clock = Moment{call_us, return_us};
  op.statements = std::move(statements);
  op.applied = applied;
  op.current_rows = std::move(current);
  return op;
}

LwtOp SerialRead(uint64_t process, int64_t call_us, int64_t return_us, std::vector<ObservedRow> rows) {
  LwtOp op;
  op.kind = LwtOp::Kind::kSerialRead;
  op.partition = "p";
  op.process = process;
  op.call_us = call_us;
  op.return_us = return_us;
  op.clock = Moment{call_us, return_us};
  op.rows = std::move(rows);
  return op;
}

bool Linearizable(const std::vector<LwtOp>& history) {
  const LwtCheckResult result = CheckLwtLinearizable(history, {false});
  EXPECT_FALSE(result.exhausted);
  return result.linearizable;
}

TEST(LwtCheckTest, ConcurrentInsertsIfNotExistsOneWinsAndTheOthersSeeIt) {
  EXPECT_TRUE(Linearizable({
      Conditional(1, 0, 10, {InsertIfNotExists(1, 100)}, false, {Row(1, 200)}),
      Conditional(2, 0, 10, {InsertIfNotExists(1, 200)}, true),
      SerialRead(3, 11, 12, {Row(1, 200)}),
  }));
  EXPECT_FALSE(Linearizable({
      Conditional(1, 0, 10, {InsertIfNotExists(1, 100)}, true),
      Conditional(2, 0, 10, {InsertIfNotExists(1, 200)}, true),
  })) << "both applied";
  EXPECT_FALSE(Linearizable({
      Conditional(1, 0, 10, {InsertIfNotExists(1, 100)}, false, {Row(1, 100)}),
      Conditional(2, 0, 10, {InsertIfNotExists(1, 200)}, true),
  })) << "the loser's current row is its own value";
}

TEST(LwtCheckTest, AFailureNamesTheFirstOperationNoOrderExplains) {
  std::vector<LwtOp> history = {
      Conditional(1, 0, 10, {InsertIfNotExists(1, 100)}, true),
      SerialRead(2, 20, 30, {Row(1, 100)}),
      SerialRead(3, 40, 50, {}),
  };
  history[2].text = "SELECT * FROM t WHERE pk = 0";
  const LwtCheckResult result = CheckLwtLinearizable(history, {false});
  EXPECT_FALSE(result.linearizable);
  EXPECT_NE(result.detail.find("the first that no order explains: process 3 at 0-0ms: SELECT * FROM t WHERE pk = 0 -> []"),
            std::string::npos)
      << result.detail;
}

TEST(LwtCheckTest, ASerialReadSeesEveryWriteThatCompletedBeforeIt) {
  EXPECT_FALSE(Linearizable({
      Conditional(1, 0, 10, {InsertIfNotExists(1, 100)}, true),
      SerialRead(2, 20, 30, {}),
  }));
  // Concurrent with the write: either is fine, but not both ways in turn.
  EXPECT_TRUE(Linearizable({
      Conditional(1, 0, 10, {InsertIfNotExists(1, 100)}, true),
      SerialRead(2, 5, 8, {}),
      SerialRead(3, 5, 9, {Row(1, 100)}),
  }));
  EXPECT_FALSE(Linearizable({
      Conditional(1, 0, 30, {InsertIfNotExists(1, 100)}, true),
      SerialRead(2, 5, 8, {Row(1, 100)}),
      SerialRead(2, 10, 12, {}),
  })) << "a row seen and then not";
}

TEST(LwtCheckTest, AWriteOfUnknownOutcomeMayHaveAppliedOrNot) {
  LwtOp unknown = Conditional(1, 0, 0, {InsertIfNotExists(1, 100)}, false);
  unknown.outcome = LwtOp::Outcome::kInfo;
  unknown.clock = Moment{0, 100};
  EXPECT_TRUE(Linearizable({unknown, SerialRead(2, 20, 30, {Row(1, 100)})}));
  EXPECT_TRUE(Linearizable({unknown, SerialRead(2, 20, 30, {})}));
  EXPECT_FALSE(Linearizable({unknown, SerialRead(2, 20, 30, {Row(1, 100)}), SerialRead(2, 40, 50, {})}));
  LwtOp failed = unknown;
  failed.outcome = LwtOp::Outcome::kFail;
  EXPECT_FALSE(Linearizable({failed, SerialRead(2, 20, 30, {Row(1, 100)})})) << "a failure has no effect";
}

TEST(LwtCheckTest, ConditionsOnColumnsAndBatchesOverSeveralRows) {
  EXPECT_TRUE(Linearizable({
      Conditional(1, 0, 10, {InsertIfNotExists(1, 1), InsertIfNotExists(2, 2)}, true),
      Conditional(2, 20, 30, {UpdateIf(1, 1, 5), UpdateIf(2, 9, 6)}, false, {Row(1, 1), Row(2, 2)}),
      Conditional(2, 40, 50, {UpdateIf(1, 1, 5), UpdateIf(2, 2, 6)}, true),
      SerialRead(3, 60, 70, {Row(1, 5), Row(2, 6)}),
  }));
  EXPECT_FALSE(Linearizable({
      Conditional(1, 0, 10, {InsertIfNotExists(1, 1), InsertIfNotExists(2, 2)}, true),
      Conditional(2, 20, 30, {UpdateIf(1, 1, 5), UpdateIf(2, 9, 6)}, true),
  })) << "applied although one condition failed";
  EXPECT_FALSE(Linearizable({
      Conditional(1, 0, 10, {InsertIfNotExists(1, 1), InsertIfNotExists(2, 2)}, true),
      Conditional(2, 20, 30, {UpdateIf(1, 1, 5), UpdateIf(2, 2, 6)}, true),
      SerialRead(3, 60, 70, {Row(1, 5), Row(2, 2)}),
  })) << "half a batch";
}

// IF EXISTS applies on a row that exists and not on one that does not,
// however many rows the batch names.
TEST(LwtCheckTest, IfExistsAppliesOnlyOnRowsThatExist) {
  EXPECT_TRUE(Linearizable({
      Conditional(1, 0, 10, {UpdateIfExists(1, 5)}, false),
      Conditional(2, 20, 30, {InsertIfNotExists(1, 1)}, true),
      Conditional(1, 40, 50, {UpdateIfExists(1, 5)}, true),
      SerialRead(3, 60, 70, {Row(1, 5)}),
  }));
  EXPECT_FALSE(Linearizable({
      Conditional(1, 0, 10, {UpdateIfExists(1, 5)}, true),
  })) << "applied on a row that does not exist";
  EXPECT_FALSE(Linearizable({
      Conditional(2, 0, 10, {InsertIfNotExists(1, 1)}, true),
      Conditional(1, 20, 30, {UpdateIfExists(1, 5)}, false, {Row(1, 1)}),
  })) << "not applied on a row that exists";
  EXPECT_FALSE(Linearizable({
      Conditional(2, 0, 10, {InsertIfNotExists(1, 1)}, true),
      Conditional(1, 20, 30, {UpdateIfExists(1, 5), UpdateIfExists(2, 6)}, true),
  })) << "a batch applied with one of its rows absent";
}

TEST(LwtCheckTest, TtlsExpireAroundTheirMomentAndNotLongAfter) {
  const std::vector<LwtOp> inserted = {Conditional(1, 0, kSecond, {InsertIfNotExists(1, 100, 10)}, true)};
  auto with = [&](LwtOp op) {
    std::vector<LwtOp> history = inserted;
    history.push_back(std::move(op));
    return Linearizable(history);
  };
  EXPECT_TRUE(with(SerialRead(2, 5 * kSecond, 6 * kSecond, {Row(1, 100)})));
  EXPECT_TRUE(with(SerialRead(2, 10 * kSecond, 10 * kSecond + 5, {Row(1, 100)}))) << "maybe expired";
  EXPECT_TRUE(with(SerialRead(2, 10 * kSecond, 10 * kSecond + 5, {}))) << "maybe expired";
  EXPECT_FALSE(with(SerialRead(2, 12 * kSecond, 13 * kSecond, {Row(1, 100)}))) << "expired at 11 s at the latest";
  EXPECT_FALSE(with(SerialRead(2, 5 * kSecond, 6 * kSecond, {}))) << "expired early";
  EXPECT_TRUE(with(Conditional(2, 12 * kSecond, 13 * kSecond, {InsertIfNotExists(1, 7)}, true)))
      << "an expired row does not exist";
  // The nodes' clocks, not real time, say when: a node 2 s behind reads
  // it at 12.5 s real time.
  std::vector<LwtOp> skewed = inserted;
  skewed.push_back(SerialRead(2, 12 * kSecond, 12 * kSecond + kSecond / 2, {Row(1, 100)}));
  skewed.back().clock = Moment{10 * kSecond, 10 * kSecond + kSecond / 2};
  EXPECT_TRUE(CheckLwtLinearizable(skewed, {false}).linearizable);
}

}  // namespace
}  // namespace charybdis::sim::model

namespace charybdis::sim::model {
namespace {

// Seed 004's shape: many clients insert IF NOT EXISTS into the rows of one
// partition at once. Rows no operation shares are searched apart, so 300
// concurrent operations take a few states each; one wrong answer among
// them still fails, and a read of a range joins its rows into one search.
TEST(LwtCheckTest, ManyConcurrentInsertsOnRowsOfOnePartitionAreCheckedRowByRow) {
  std::vector<LwtOp> history;
  for (int64_t row = 0; row < 100; row++) {
    for (int64_t client = 0; client < 3; client++) {
      const bool wins = client == 0;
      history.push_back(Conditional(static_cast<uint64_t>(row * 3 + client), 0, 10,
                                    {InsertIfNotExists(row, row * 10 + client)}, wins,
                                    wins ? std::vector<ObservedRow>{} : std::vector<ObservedRow>{Row(row, row * 10)}));
    }
  }
  const LwtCheckResult result = CheckLwtLinearizable(history, {false}, 10'000);
  EXPECT_TRUE(result.linearizable) << result.detail;
  EXPECT_FALSE(result.exhausted) << result.detail;
  EXPECT_EQ(result.groups, 100u);

  std::vector<LwtOp> wrong = history;
  wrong[3 * 57 + 2].current_rows = {Row(57, 571)};  // a loser names another loser's value
  const LwtCheckResult caught = CheckLwtLinearizable(wrong, {false}, 10'000);
  EXPECT_FALSE(caught.linearizable);
  EXPECT_FALSE(caught.exhausted);

  history.push_back(SerialRead(999, 20, 30, {Row(3, 30), Row(4, 40)}));
  history.back().slice.low = K(3);
  history.back().slice.high = K(4);
  const LwtCheckResult joined = CheckLwtLinearizable(history, {false}, 10'000);
  EXPECT_TRUE(joined.linearizable) << joined.detail;
  EXPECT_EQ(joined.groups, 99u);  // rows 3 and 4 searched together
}

}  // namespace
}  // namespace charybdis::sim::model
