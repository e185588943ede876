// The history file (core/workload/history_json.h) is how a real-node run's
// history reaches the checkers (--check_history): what it writes must read
// back the same, the coordinator of each answer included, which the
// per-coordinator semantics checks need.

#include "core/workload/history_json.h"

#include <gtest/gtest.h>

#include <sstream>

#include "tests/history_builder.h"

namespace charybdis {
namespace {

TEST(HistoryJsonTest, AWrittenHistoryReadsBackWithItsCoordinators) {
  sim::testing::HistoryBuilder builder;
  builder.Invoke(3, HistoryOp::Function::kWrite, CL_QUORUM, "v1");
  HistoryOp& ok = builder.Ok(3, HistoryOp::Function::kWrite, CL_QUORUM, 1500, "v1");
  ok.coordinator_node = 2;
  ok.coordinator_shard = 1;
  ok.coordinator_life = 77;
  History history = builder.history_;
  for (HistoryOp& op : history) op.table = "t";
  std::stringstream file;
  WriteHistoryJson(history, file);
  const absl::StatusOr<History> read = ReadHistoryJson(file, "t", "dc1");
  ASSERT_TRUE(read.ok()) << read.status() << "\n" << file.str();
  ASSERT_EQ(read->size(), 2u);
  const HistoryOp& back = (*read)[1];
  EXPECT_EQ(back.type, HistoryOp::Type::kOk);
  EXPECT_EQ(back.value, "v1");
  EXPECT_EQ(back.timestamp, 1500);
  EXPECT_EQ(back.coordinator_node, 2u);
  EXPECT_EQ(back.coordinator_shard, 1u);
  EXPECT_EQ(back.coordinator_life, 77u);
  EXPECT_EQ((*read)[0].coordinator_life, 0u) << "an invocation has no coordinator";
}

TEST(HistoryJsonTest, AMalformedCoordinatorIsRefusedWithItsLine) {
  std::stringstream file(
      "{\"process\":1,\"type\":\"invoke\",\"f\":\"read\",\"key\":\"k\",\"time\":1,\"consistency\":\"ONE\"}\n"
      "{\"process\":1,\"type\":\"ok\",\"f\":\"read\",\"key\":\"k\",\"time\":2,\"consistency\":\"ONE\","
      "\"timestamp\":0,\"value\":null,\"coordinator\":[1,0]}\n");
  const absl::StatusOr<History> read = ReadHistoryJson(file, "t", "dc1");
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("[node, shard, life]"), std::string::npos) << read.status();
  EXPECT_NE(read.status().message().find("2"), std::string::npos) << read.status();
}

TEST(HistoryJsonTest, AnUnknownTypeOrFunctionIsRefusedByName) {
  const std::string invoke = "{\"process\":1,\"type\":\"invoke\",\"f\":\"read\",\"key\":\"k\",\"time\":1,"
                             "\"consistency\":\"ONE\"}\n";
  std::stringstream function(invoke.substr(0, invoke.find("read")) + "append" +
                             invoke.substr(invoke.find("read") + 4));
  absl::StatusOr<History> read = ReadHistoryJson(function, "t", "dc1");
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("\"append\""), std::string::npos) << read.status();
  std::stringstream type(invoke.substr(0, invoke.find("invoke")) + "begun" + invoke.substr(invoke.find("invoke") + 6));
  read = ReadHistoryJson(type, "t", "dc1");
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("\"begun\""), std::string::npos) << read.status();
}

}  // namespace
}  // namespace charybdis
