// Scenario files and node configs share one text-format parser: syntax
// errors and field problems name the file, line and column.

#include "core/tools/text_proto.h"

#include <gtest/gtest.h>

#include "node/server/config.h"
#include "proto/scenario.pb.h"

namespace charybdis {
namespace {

TEST(TextProtoTest, ASyntaxErrorNamesFileLineAndColumn) {
  scenario::Scenario spec;
  google::protobuf::TextFormat::ParseInfoTree locations;
  const absl::Status status = ParseTextProto("s.textproto", "name: \"x\"\ntime_limit_ms: oops\n", spec, locations);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message().rfind("s.textproto:2:16: ", 0), 0u) << status.message();
}

TEST(TextProtoTest, FieldsAreLocated) {
  scenario::Scenario spec;
  google::protobuf::TextFormat::ParseInfoTree locations;
  ASSERT_TRUE(ParseTextProto("s.textproto", "name: \"x\"\n\n  time_limit_ms: 5\n", spec, locations).ok());
  EXPECT_EQ(spec.time_limit_ms(), 5u);
  const auto where = locations.GetLocation(scenario::Scenario::descriptor()->FindFieldByName("time_limit_ms"), -1);
  EXPECT_EQ(where.line, 2);
  EXPECT_EQ(where.column, 2);
}

TEST(TextProtoTest, AProblemInARepeatedFieldsFirstElementIsLocatedThere) {
  scenario::Scenario spec;
  google::protobuf::TextFormat::ParseInfoTree locations;
  const std::string text = "name: \"x\"\nworkload {\n  name: \"a\"\n  kv {\n    clients: 0\n  }\n}\n";
  ASSERT_TRUE(ParseTextProto("s.textproto", text, spec, locations).ok());
  TextProtoProblems problems("s.textproto", scenario::Scenario::descriptor(), locations);
  // Index 0 is an element like any other, not "the field as a whole".
  problems.Add({{"workload", 0}, {"kv"}, {"clients"}}, "must be at least 1");
  EXPECT_EQ(problems.text(), "s.textproto:5:5: workload[0].kv.clients: must be at least 1");
}

TEST(TextProtoTest, NodeConfigsUseTheSameParser) {
  const auto syntax = node::ParseConfig("n.conf", "node_id: 1\nshards: x\n");
  EXPECT_EQ(syntax.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(syntax.status().message().rfind("n.conf:2:9: ", 0), 0u) << syntax.status().message();
  const auto bad_shards = node::ParseConfig("n.conf", "node_id: 1\nshards: 100000\n");
  EXPECT_NE(bad_shards.status().message().find("n.conf:2:1: shards: must be between 1 and 256"),
            std::string::npos)
      << bad_shards.status().message();
  // A field left out has no line: the problem is the file's (this threw).
  EXPECT_NE(bad_shards.status().message().find("n.conf: member: list every node of the cluster"),
            std::string::npos)
      << bad_shards.status().message();
}

}  // namespace
}  // namespace charybdis
