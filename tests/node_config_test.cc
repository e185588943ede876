// A node config's defaults (node/server/config.h): what docs/node.md and
// proto/node.proto promise for every field a config leaves out.

#include "node/server/config.h"

#include <gtest/gtest.h>

namespace charybdis::node {
namespace {

constexpr char kMinimal[] =
    "node_id: 1\n"
    "data_directory: \"/tmp/unused\"\n"
    "member { id: 1 datacenter: \"dc1\" rack: \"r1\" internode_address: \"127.0.0.1:7000\""
    " client_address: \"127.0.0.1:9160\" }\n"
    "replication { datacenter: \"dc1\" replication_factor: 1 }\n"
    "table { name: \"kv\" column: \"v\" }\n";

TEST(NodeConfigDefaultsTest, ALeftOutFieldTakesItsDocumentedDefault) {
  const absl::StatusOr<LoadedConfig> loaded = ParseConfig("minimal.textproto", kMinimal);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const NodeConfig& node = loaded->node;
  EXPECT_EQ(node.shards, 1u);
  EXPECT_EQ(node.failure_detector.heartbeat_interval, 200 * kMillisecond);
  EXPECT_EQ(node.failure_detector.convict_after, 1000 * kMillisecond);
  EXPECT_EQ(node.coordinator.write_timeout, 2000 * kMillisecond);
  EXPECT_EQ(node.coordinator.read_timeout, 5000 * kMillisecond);
  EXPECT_EQ(node.coordinator.max_hint_window, 3 * 3600 * kSecond);
  EXPECT_EQ(node.coordinator.hint_replay_interval, 1000 * kMillisecond);
  EXPECT_TRUE(node.coordinator.hinted_handoff);
  EXPECT_TRUE(node.coordinator.lwt_batching);
  EXPECT_EQ(node.read_cache_bytes, size_t{32} << 20);
  EXPECT_EQ(node.ring->layout().vnodes_per_node, 16u);
}

TEST(NodeConfigDefaultsTest, AGivenFieldOverridesItsDefault) {
  const absl::StatusOr<LoadedConfig> loaded =
      ParseConfig("tuned.textproto", std::string(kMinimal) + "convict_after_ms: 3000\nheartbeat_interval_ms: 500\n");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->node.failure_detector.convict_after, 3000 * kMillisecond);
  EXPECT_EQ(loaded->node.failure_detector.heartbeat_interval, 500 * kMillisecond);
}

// A table's tombstone GC (docs/repair.md): the default, given options,
// and a mode of no one's refused with where it is.
TEST(NodeConfigDefaultsTest, ATablesTombstoneGcIsItsOwnOrTheDefault) {
  const absl::StatusOr<LoadedConfig> loaded = ParseConfig(
      "gc.textproto", std::string(kMinimal) +
                          "table { name: \"events\" column: \"v\" tombstone_gc: \"timeout\" gc_grace_seconds: 60 }\n");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->node.tables.at("kv").gc, TombstoneGc());
  const TombstoneGc& events = loaded->node.tables.at("events").gc;
  EXPECT_EQ(events.mode, TombstoneGc::Mode::kTimeout);
  EXPECT_EQ(events.gc_grace_seconds, 60);
  EXPECT_EQ(events.propagation_delay_seconds, 3600);
  const absl::StatusOr<LoadedConfig> refused = ParseConfig(
      "bad.textproto", std::string(kMinimal) + "table { name: \"t\" column: \"v\" tombstone_gc: \"sometimes\" }\n");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("sometimes"), std::string::npos) << refused.status();
  EXPECT_NE(refused.status().message().find("table"), std::string::npos) << refused.status();
}

}  // namespace
}  // namespace charybdis::node
