// A node config's defaults (node/server/config.h): what docs/node.md and
// proto/node.proto promise for every field a config leaves out.

#include "node/server/config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

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

// The CQL port's authentication (docs/security.md): the superuser's
// password comes from a file only its owner reads, relative to the config.
TEST(NodeConfigAuthTest, ThePasswordFileIsReadAndMustBeItsOwnersAlone) {
  const std::string directory = ::testing::TempDir() + "/auth_config";
  std::filesystem::create_directories(directory);
  const std::string file = directory + "/superuser";
  std::ofstream(file) << "s3cret\n";
  std::filesystem::permissions(file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::replace);
  const std::string auth =
      "cql_address: \"127.0.0.1:9042\"\n"
      "auth { required: true superuser: \"root\" superuser_password_file: \"superuser\" }\n";
  const absl::StatusOr<LoadedConfig> loaded = ParseConfig(directory + "/node.textproto", std::string(kMinimal) + auth);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(loaded->cql_auth.required);
  EXPECT_EQ(loaded->cql_auth.superuser, "root");
  EXPECT_EQ(loaded->cql_auth.superuser_password, "s3cret");
  std::filesystem::permissions(file, std::filesystem::perms::group_read, std::filesystem::perm_options::add);
  const absl::StatusOr<LoadedConfig> shared = ParseConfig(directory + "/node.textproto", std::string(kMinimal) + auth);
  ASSERT_FALSE(shared.ok());
  EXPECT_NE(shared.status().message().find("chmod 600"), std::string::npos) << shared.status();
  const absl::StatusOr<LoadedConfig> off = ParseConfig(
      directory + "/node.textproto", std::string(kMinimal) + "auth { superuser_password_file: \"superuser\" }\n");
  ASSERT_FALSE(off.ok());
  EXPECT_NE(off.status().message().find("needs required: true"), std::string::npos) << off.status();
  // Logins are checked through the CQL server: no CQL port, no login.
  const absl::StatusOr<LoadedConfig> no_cql =
      ParseConfig(directory + "/node.textproto", std::string(kMinimal) + "auth { required: true }\n");
  ASSERT_FALSE(no_cql.ok());
  EXPECT_NE(no_cql.status().message().find("needs cql_address"), std::string::npos) << no_cql.status();
}

TEST(NodeConfigAuthTest, ACqlPortBeyondLoopbackWithoutPasswordsIsOpenToEveryone) {
  LoadedConfig config;
  config.cql_address = "127.0.0.1:9042";
  EXPECT_FALSE(CqlOpenToEveryone(config));
  config.cql_address = "10.1.2.3:9042";
  EXPECT_TRUE(CqlOpenToEveryone(config));
  config.cql_auth.required = true;
  EXPECT_FALSE(CqlOpenToEveryone(config));
  config.cql_address = "";
  config.cql_auth.required = false;
  EXPECT_FALSE(CqlOpenToEveryone(config));  // no CQL port
}

// The events of ExposuresOf, in its order.
std::vector<std::string> ExposureEvents(const LoadedConfig& config) {
  std::vector<std::string> events;
  for (const Exposure& exposure : ExposuresOf(config)) events.push_back(exposure.event);
  return events;
}

TEST(NodeConfigAuthTest, PasswordsBeyondLoopbackWithoutTlsTravelInClear) {
  LoadedConfig config;
  config.cql_auth.required = true;
  config.cql_address = "10.1.2.3:9042";
  config.client_address = "10.1.2.3:5000";
  config.internode_address = "127.0.0.1:7000";
  EXPECT_EQ(ExposureEvents(config),
            (std::vector<std::string>{"cql_passwords_in_clear", "client_api_passwords_in_clear"}));
  config.tls_clients = Tls::REQUIRED;
  EXPECT_TRUE(ExposureEvents(config).empty());
  config.tls_clients = Tls::OFF;
  config.cql_address = "127.0.0.1:9042";
  config.client_address = "127.0.0.1:5000";
  EXPECT_TRUE(ExposureEvents(config).empty());
}

TEST(NodeConfigAuthTest, OpenPortsBeyondLoopbackAreWarnedOfEachByName) {
  LoadedConfig config;
  config.cql_address = "10.1.2.3:9042";
  config.client_address = "10.1.2.3:5000";
  config.internode_address = "10.1.2.3:7000";
  EXPECT_EQ(ExposureEvents(config),
            (std::vector<std::string>{"cql_open_to_everyone", "client_api_open_to_everyone", "internode_in_clear"}));
  config.tls_internode = true;
  config.cql_address = "";  // no CQL port
  EXPECT_EQ(ExposureEvents(config), (std::vector<std::string>{"client_api_open_to_everyone"}));
  config.client_address = "localhost:5000";
  EXPECT_TRUE(ExposureEvents(config).empty());
}

// TLS (docs/security.md, "TLS"): the three files, relative to the config,
// when anything is on; a section that turns nothing on is a mistake.
TEST(NodeConfigTlsTest, TheFilesAreNeededWhenAnythingIsOnAndNothingOnIsAMistake) {
  const std::string directory = ::testing::TempDir() + "/tls_config";
  std::filesystem::create_directories(directory);
  for (const char* name : {"node.pem", "node.key", "ca.pem"}) std::ofstream(directory + "/" + name) << "pem\n";
  const std::string files = "certificate_file: \"node.pem\" private_key_file: \"node.key\" ca_file: \"ca.pem\"";
  const absl::StatusOr<LoadedConfig> loaded = ParseConfig(
      directory + "/node.textproto", absl::StrCat(kMinimal, "tls { ", files, " clients: REQUIRED internode: true }\n"));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_TRUE(loaded->tls_files.has_value());
  EXPECT_EQ(loaded->tls_files->ca_file, directory + "/ca.pem");
  EXPECT_EQ(loaded->tls_clients, Tls::REQUIRED);
  EXPECT_TRUE(loaded->tls_internode);
  const absl::StatusOr<LoadedConfig> nothing_on =
      ParseConfig(directory + "/node.textproto", absl::StrCat(kMinimal, "tls { ", files, " }\n"));
  ASSERT_FALSE(nothing_on.ok());
  EXPECT_NE(nothing_on.status().message().find("turns nothing on"), std::string::npos) << nothing_on.status();
  const absl::StatusOr<LoadedConfig> missing = ParseConfig(
      directory + "/node.textproto",
      absl::StrCat(kMinimal, "tls { certificate_file: \"gone.pem\" private_key_file: \"node.key\" internode: true }\n"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("cannot read " + directory + "/gone.pem"), std::string::npos)
      << missing.status();
  EXPECT_NE(missing.status().message().find("tls.ca_file: is required"), std::string::npos) << missing.status();
}

}  // namespace
}  // namespace charybdis::node
