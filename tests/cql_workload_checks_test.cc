// Two checks of the CQL workload (sim/cql_workload.h) on answers made by
// hand: logged_batches_atomic fails a batch found in part, an
// acknowledged one missing or a refused one present; and
// dropped_columns_stay_dropped fails a column added again whose first read
// finds a value of an earlier life. And the generated schema's partition
// keys: each type's literal, token and the index a returned key names.

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "core/data/token.h"
#include "sim/cql_schema_lives.h"
#include "sim/cql_logged_batches.h"
#include "sim/cql_statements.h"

namespace charybdis::sim {
namespace {

using Outcome = model::LwtOp::Outcome;

// The rows answer of `SELECT id ...`: one row per id.
CqlAnswer Ids(const std::set<int64_t>& ids) {
  CqlAnswer answer;
  answer.kind = CqlAnswer::Kind::kRows;
  answer.columns = {"id"};
  for (int64_t id : ids) answer.rows.push_back({model::Value(id)});
  return answer;
}

// Batches drawn from seed 1, recorded as the tests say, and read back.
class LoggedBatchesTest : public ::testing::Test {
 protected:
  void Send(const std::vector<Outcome>& outcomes) {
    Random random(1);
    for (Outcome outcome : outcomes) {
      const size_t number = batches_.Next(random).first;
      batches_.Record(number, outcome);
    }
  }
  // Reads back every partition, holding the ids in `present`.
  void ReadBack(const std::set<int64_t>& present) {
    for (uint32_t partition = 0; partition < LoggedBatches::kPartitions; partition++) {
      // Every partition answers every id of `present`: the check looks a
      // batch's row up in its own partition only. Batch n's ids are 4n,
      // 4n + 1 and, for three rows, 4n + 2.
      ASSERT_TRUE(batches_.ReadBackRows(partition, Ids(present)));
    }
  }

  LoggedBatches batches_{"ks.batches"};
};

TEST_F(LoggedBatchesTest, WholeOrAbsentAsTheOutcomeAllowsPasses) {
  Send({Outcome::kOk, Outcome::kFail, Outcome::kInfo});
  ReadBack({0, 1, 2});  // batch 0 whole (it has two or three rows), 1 and 2 absent
  const CheckResult result = batches_.Check("logged_batches_atomic");
  EXPECT_TRUE(result.passed) << result.detail;
}

TEST_F(LoggedBatchesTest, ABatchInPartFails) {
  Send({Outcome::kInfo});
  ReadBack({0});  // the first row of batch 0, not the second
  const CheckResult result = batches_.Check("logged_batches_atomic");
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.detail.find("batch 0 (unknown) has 1 of its"), std::string::npos) << result.detail;
}

TEST_F(LoggedBatchesTest, AnAcknowledgedBatchMissingOrARefusedOnePresentFails) {
  Send({Outcome::kOk, Outcome::kFail});
  ReadBack({4, 5, 6});  // batch 0 absent, batch 1 whole
  const CheckResult result = batches_.Check("logged_batches_atomic");
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.detail.find("2 in part or wrongly"), std::string::npos) << result.detail;
}

TEST_F(LoggedBatchesTest, NothingReadBackChecksNothing) {
  Send({Outcome::kOk});
  EXPECT_TRUE(batches_.Check("logged_batches_atomic").nothing_checked);
}

CqlAnswer Ok() {
  CqlAnswer answer;
  answer.kind = CqlAnswer::Kind::kSchemaChange;
  return answer;
}

// One life: ADD or CREATE, the read answered `read`, the write, DROP.
void Live(SchemaLives& lives, const CqlAnswer& read) {
  const CqlAnswer ok = Ok();
  lives.OnAnswer(&ok);
  lives.OnAnswer(&read);
  lives.OnAnswer(&ok);
  lives.OnAnswer(&ok);
}

CqlAnswer Column(std::optional<model::Value> value) {
  CqlAnswer answer;
  answer.kind = CqlAnswer::Kind::kRows;
  answer.columns = {"x"};
  answer.rows.push_back({std::move(value)});
  return answer;
}

TEST(SchemaLivesTest, AColumnAddedAgainThatReadsAnEarlierLifesValueFails) {
  SchemaLives lives = SchemaLives::OfColumn("ks.t", " WHERE k = 0");
  EXPECT_EQ(lives.Statement(), "ALTER TABLE ks.t ADD x0 int");
  Live(lives, Column(std::nullopt));
  Live(lives, Column(std::nullopt));
  EXPECT_EQ(lives.Statement(), "ALTER TABLE ks.t ADD x0 int") << "the third life brings x0 back";
  EXPECT_TRUE(lives.Check("dropped_columns_stay_dropped").passed);
  Live(lives, Column(model::Value(int64_t{0})));  // life 0's value
  const CheckResult result = lives.Check("dropped_columns_stay_dropped");
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.detail.find("x0 in life 2 read 0 of an earlier life"), std::string::npos) << result.detail;
}

TEST(SchemaLivesTest, ALifeWhoseAddFailedIsNotRead) {
  SchemaLives lives = SchemaLives::OfColumn("ks.t", " WHERE k = 0");
  CqlAnswer refused;
  refused.kind = CqlAnswer::Kind::kError;
  lives.OnAnswer(&refused);
  EXPECT_EQ(lives.Statement(), "ALTER TABLE ks.t DROP x0");
  EXPECT_FALSE(lives.BetweenLives());
  lives.OnAnswer(&refused);
  EXPECT_TRUE(lives.BetweenLives());
}

TEST(SchemaLivesTest, ATableMadeAgainThatReadsAnEarlierLifesRowFails) {
  SchemaLives lives = SchemaLives::OfTable("ks");
  EXPECT_EQ(lives.Statement(), "CREATE TABLE ks.l0 (pk int PRIMARY KEY, v int)");
  const CqlAnswer ok = Ok();
  lives.OnAnswer(&ok);
  EXPECT_EQ(lives.Statement(), "SELECT v FROM ks.l0 WHERE pk = 0");
  CqlAnswer empty;
  empty.kind = CqlAnswer::Kind::kRows;
  empty.columns = {"v"};
  lives.OnAnswer(&empty);
  EXPECT_EQ(lives.Statement(), "UPDATE ks.l0 SET v = 0 WHERE pk = 0");
  lives.OnAnswer(&ok);
  EXPECT_EQ(lives.Statement(), "DROP TABLE ks.l0");
  lives.OnAnswer(&ok);
  EXPECT_TRUE(lives.BetweenLives());
  Live(lives, empty);
  EXPECT_TRUE(lives.Check("dropped_tables_stay_dropped").passed);
  EXPECT_EQ(lives.Statement(), "CREATE TABLE ks.l0 (pk int PRIMARY KEY, v int)") << "the third life makes l0 again";
  Live(lives, Column(model::Value(int64_t{0})));  // life 0's row
  const CheckResult result = lives.Check("dropped_tables_stay_dropped");
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.detail.find("ks.l0 in life 2 read 0 of an earlier life"), std::string::npos) << result.detail;
}

GeneratedSchema KeyedBy(GeneratedSchema::Type type) {
  GeneratedSchema schema;
  schema.partition[0].type = type;
  return schema;
}

std::optional<int64_t> IndexOf(const GeneratedSchema& schema, model::Value key) {
  return schema.PartitionIndexOf({std::move(key)});
}

// A scan's partitions are checked by these: a token computed from the
// wrong bytes would put partitions outside bounds they are within.
TEST(GeneratedSchemaTest, EachPartitionKeyTypeHasItsLiteralTokenAndIndex) {
  const GeneratedSchema ints = KeyedBy(GeneratedSchema::Type::kInt);
  EXPECT_EQ(ints.PartitionLiterals(3), std::vector<std::string>{"3"});
  EXPECT_EQ(ints.WherePartition(3), " WHERE pk = 3");
  EXPECT_EQ(ints.PartitionToken(3), TokenOf(std::string("\0\0\0\3", 4)));
  EXPECT_EQ(IndexOf(ints, int64_t{3}), 3);
  EXPECT_EQ(IndexOf(ints, int64_t{-1}), std::nullopt);
  EXPECT_EQ(IndexOf(ints, std::string("3")), std::nullopt);

  const GeneratedSchema bigints = KeyedBy(GeneratedSchema::Type::kBigint);
  const int64_t key = (int64_t{1} << 40) + 3;
  EXPECT_EQ(bigints.PartitionLiterals(3), std::vector<std::string>{absl::StrCat(key)});
  std::string bytes;
  for (int shift = 56; shift >= 0; shift -= 8) bytes.push_back(static_cast<char>(key >> shift));
  EXPECT_EQ(bigints.PartitionToken(3), TokenOf(bytes));
  EXPECT_EQ(IndexOf(bigints, key), 3);
  EXPECT_EQ(IndexOf(bigints, int64_t{3}), std::nullopt) << "the int's key is no bigint's";

  const GeneratedSchema texts = KeyedBy(GeneratedSchema::Type::kText);
  EXPECT_EQ(texts.PartitionLiterals(3), std::vector<std::string>{"'p3'"});
  EXPECT_EQ(texts.PartitionToken(3), TokenOf("p3"));
  EXPECT_EQ(IndexOf(texts, std::string("p3")), 3);
  EXPECT_EQ(IndexOf(texts, std::string("p03")), std::nullopt);
  EXPECT_EQ(IndexOf(texts, std::string("q3")), std::nullopt);
  EXPECT_EQ(IndexOf(texts, int64_t{3}), std::nullopt);
}

// A composite key's token is of Cassandra's composite form: each column's
// length (two bytes), its bytes and a zero.
TEST(GeneratedSchemaTest, ACompositePartitionKeyNamesEachColumnAndHashesTheirComposite) {
  GeneratedSchema schema = KeyedBy(GeneratedSchema::Type::kInt);
  schema.partition.push_back({"pk2", GeneratedSchema::Type::kText});
  EXPECT_EQ(schema.PartitionColumns(), "pk, pk2");
  EXPECT_EQ(schema.PartitionLiterals(3), (std::vector<std::string>{"3", "'p1003'"}));
  EXPECT_EQ(schema.WherePartition(3), " WHERE pk = 3 AND pk2 = 'p1003'");
  const std::string composite = std::string("\0\4\0\0\0\3\0", 7) + std::string("\0\5p1003\0", 8);
  EXPECT_EQ(schema.PartitionToken(3), TokenOf(composite));
  EXPECT_EQ(schema.PartitionIndexOf({int64_t{3}, std::string("p1003")}), 3);
  EXPECT_EQ(schema.PartitionIndexOf({int64_t{3}, std::string("p1004")}), std::nullopt);
  EXPECT_EQ(schema.PartitionIndexOf({int64_t{3}}), std::nullopt);
  EXPECT_NE(schema.Ddl("{}")[1].find("PRIMARY KEY ((pk, pk2)"), std::string::npos) << schema.Ddl("{}")[1];
}

}  // namespace
}  // namespace charybdis::sim
