#include "sim/scenario_loader.h"

#include <gtest/gtest.h>

#include "tests/scenario_text.h"

namespace charybdis::sim {
namespace {

using testing::BaseScenario;
using testing::MustParse;

std::string ErrorOf(const std::string& text) {
  absl::StatusOr<LoadedScenario> loaded = ParseScenario("bad.textproto", text);
  EXPECT_FALSE(loaded.ok());
  return loaded.ok() ? "" : std::string(loaded.status().message());
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(ScenarioLoaderTest, ValidScenarioNumbersNodesInFileOrder) {
  const LoadedScenario loaded = MustParse(BaseScenario());
  ASSERT_EQ(loaded.topology.nodes.size(), 3u);
  EXPECT_EQ(loaded.topology.nodes[2].id, 3u);
  EXPECT_EQ(loaded.topology.nodes[2].rack, "r3");
  EXPECT_EQ(loaded.topology.shards_per_node, 2u);
}

TEST(ScenarioLoaderTest, ShippedScenariosLoad) {
  absl::StatusOr<LoadedScenario> loaded = LoadScenario("scenarios/smoke.textproto");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->spec.name(), "smoke");
}

TEST(ScenarioLoaderTest, MissingFileIsNotFound) {
  absl::StatusOr<LoadedScenario> loaded = LoadScenario("no/such/file.textproto");
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kNotFound);
}

TEST(ScenarioLoaderTest, UnknownFieldNamesFileLineAndField) {
  const std::string error = ErrorOf("name: \"x\"\n\ntopology {\n  colour: 3\n}\n");
  EXPECT_NE(error.find("bad.textproto:4:"), std::string::npos) << error;
  EXPECT_NE(error.find("colour"), std::string::npos) << error;
}

TEST(ScenarioLoaderTest, MalformedTextNamesTheLine) {
  const std::string error = ErrorOf("name: \"x\"\ntime_limit_ms: 10 {\n");
  EXPECT_NE(error.find("bad.textproto:2:"), std::string::npos) << error;
}

TEST(ScenarioLoaderTest, ReplicationFactorAboveDatacenterSizeNamesLineAndField) {
  const std::string error =
      ErrorOf(Replace(BaseScenario(), "replication_factor: 3", "replication_factor: 4"));
  EXPECT_NE(error.find("bad.textproto:12:"), std::string::npos) << error;
  EXPECT_NE(error.find("topology.replication.datacenter[0].replication_factor"), std::string::npos)
      << error;
  EXPECT_NE(error.find("its 3 nodes"), std::string::npos) << error;
}

TEST(ScenarioLoaderTest, FaultOnUnknownNode) {
  const std::string error = ErrorOf(BaseScenario("faults { action { at_ms: 5 crash { node: 9 } } }\n"));
  EXPECT_NE(error.find("faults.action[0].crash.node: no node 9"), std::string::npos) << error;
}

TEST(ScenarioLoaderTest, SelfContradictions) {
  EXPECT_NE(ErrorOf(BaseScenario("faults { action { at_ms: 5 partition { side_a: 1 side_b: 1 } } }"))
                .find("on both sides"),
            std::string::npos);
  EXPECT_NE(ErrorOf(BaseScenario("replication_typo: 1")).find("replication_typo"), std::string::npos);
  EXPECT_NE(ErrorOf(Replace(BaseScenario(), "network {", "network { loss: 1.5"))
                .find("network.loss: must be in [0, 1]"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Replace(BaseScenario(), "convict_after_ms: 500", "convict_after_ms: 50"))
                .find("failure_detector.convict_after_ms: must exceed the heartbeat interval"),
            std::string::npos);
  EXPECT_NE(ErrorOf(BaseScenario("workload { name: \"w\" ping { clients: 1 requests_per_client: 1 "
                                 "timeout_ms: 1 datacenter: \"mars\" } }"))
                .find("no datacenter is named \"mars\""),
            std::string::npos);
  EXPECT_NE(ErrorOf(BaseScenario("checks { settle_ms: 30000 }")).find("checks.settle_ms"),
            std::string::npos);
  EXPECT_NE(ErrorOf(BaseScenario("random_faults { start_ms: 10 end_ms: 5 }"))
                .find("random_faults.end_ms"),
            std::string::npos);
}

TEST(ScenarioLoaderTest, EveryProblemIsReportedNotJustTheFirst) {
  const std::string error = ErrorOf(BaseScenario(
      "faults { action { at_ms: 5 crash { node: 9 } } action { at_ms: 6 pause { node: 1 } } }"));
  EXPECT_NE(error.find("crash.node"), std::string::npos) << error;
  EXPECT_NE(error.find("pause.duration_ms"), std::string::npos) << error;
}

TEST(ScenarioLoaderTest, FailureDetectorDefaults) {
  const LoadedScenario loaded = MustParse(Replace(
      BaseScenario(), "failure_detector { heartbeat_interval_ms: 100 convict_after_ms: 500 }", ""));
  EXPECT_EQ(loaded.spec.failure_detector().heartbeat_interval_ms(), 200u);
  EXPECT_EQ(loaded.spec.failure_detector().convict_after_ms(), 1000u);
}

TEST(ScenarioLoaderTest, CrashPointsNeedAPointAndAReplyKind) {
  MustParse(BaseScenario(
      "faults { action { at_ms: 10 crash_point { node: 2 point: AFTER_REPLY "
      "message: \"paxos_promise\" power_cut: true restart_after_ms: 100 } } }"));
  const std::string no_point =
      ErrorOf(BaseScenario("faults { action { at_ms: 10 crash_point { node: 2 } } }"));
  EXPECT_NE(no_point.find("faults.action[0].crash_point.point"), std::string::npos) << no_point;
  const std::string not_a_reply = ErrorOf(BaseScenario(
      "faults { action { at_ms: 10 crash_point { node: 2 point: AFTER_REPLY "
      "message: \"paxos_prepare\" } } }"));
  EXPECT_NE(not_a_reply.find("\"paxos_prepare\" is not a reply"), std::string::npos) << not_a_reply;
  const std::string message_on_sync = ErrorOf(BaseScenario(
      "faults { action { at_ms: 10 crash_point { node: 4 point: BEFORE_SYNC "
      "message: \"paxos_promise\" } } }"));
  EXPECT_NE(message_on_sync.find("only AFTER_REPLY"), std::string::npos) << message_on_sync;
  EXPECT_NE(message_on_sync.find("no node 4"), std::string::npos) << message_on_sync;
}

TEST(ScenarioLoaderTest, PowerCutFractionIsAProbability) {
  const std::string error = ErrorOf(BaseScenario(
      "random_faults { start_ms: 1 end_ms: 100 max_power_cut_fraction: 1.5 "
      "max_crash_points_per_minute: -1 }"));
  EXPECT_NE(error.find("random_faults.max_power_cut_fraction"), std::string::npos) << error;
  EXPECT_NE(error.find("random_faults.max_crash_points_per_minute"), std::string::npos) << error;
}

TEST(ScenarioLoaderTest, RequiredProbesMustExist) {
  MustParse(BaseScenario("checks { sweep_reaches_probe: \"paxos.fate.committed\" }"));
  const std::string error =
      ErrorOf(BaseScenario("checks { sweep_reaches_probe: \"paxos.fate.kommitted\" }"));
  EXPECT_NE(error.find("checks.sweep_reaches_probe[0]"), std::string::npos) << error;
  EXPECT_NE(error.find("no probe \"paxos.fate.kommitted\""), std::string::npos) << error;
}

}  // namespace
TEST(ScenarioLoaderTest, MisdirectedWritesAreRefusedWithPaxos) {
  const std::string workload = R"(
schema { table { name: "kv" column: "v" } }
workload { name: "w" kv { clients: 1 operations_per_client: 1 table: "kv" key_count: 1
  cas_fraction: 1 write_consistency: CL_QUORUM read_consistency: CL_QUORUM } }
)";
  const std::string error = ErrorOf(BaseScenario(workload + R"(
faults { action { at_ms: 1 disk { node: 1 duration_ms: 5 misdirect_write_probability: 0.1 } } }
)"));
  EXPECT_NE(error.find("misdirect_write_probability: Paxos does not survive"), std::string::npos) << error;
  // Bit flips are caught by checksums, so LWTs may meet them.
  EXPECT_TRUE(ParseScenario("ok.textproto", BaseScenario(workload + R"(
faults { action { at_ms: 1 disk { node: 1 duration_ms: 5 corrupt_read_probability: 0.1 } } }
)")).ok());
}

}  // namespace charybdis::sim
