#include "sim/scenario_loader.h"

#include "core/schema/bootstrap.h"
#include "sim/topology.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "core/tools/text_proto.h"
#include "sim/scenario_validator.h"

namespace charybdis::sim {

absl::StatusOr<LoadedScenario> LoadScenario(const std::string& path) {
  std::ifstream file(path);
  if (!file) return absl::NotFoundError(absl::StrCat(path, ": cannot open scenario file"));
  std::stringstream text;
  text << file.rdbuf();
  return ParseScenario(path, text.str());
}

absl::StatusOr<LoadedScenario> ParseScenario(const std::string& path, const std::string& text) {
  LoadedScenario loaded;
  loaded.path = path;
  google::protobuf::TextFormat::ParseInfoTree locations;
  if (absl::Status parsed = ParseTextProto(path, text, loaded.spec, locations); !parsed.ok()) {
    return parsed;
  }
  const std::string problems = ValidateScenario(path, loaded.spec, locations);
  if (!problems.empty()) {
    return absl::InvalidArgumentError(problems);
  }
  scenario::FailureDetector* detector = loaded.spec.mutable_failure_detector();
  if (detector->heartbeat_interval_ms() == 0) {
    detector->set_heartbeat_interval_ms(kDefaultHeartbeatIntervalMs);
  }
  if (detector->convict_after_ms() == 0) detector->set_convict_after_ms(kDefaultConvictAfterMs);
  loaded.topology = Topology::From(loaded.spec.topology());
  // The CQL schema's keyspaces must fit the topology's datacenters.
  const auto& cql = loaded.spec.schema().cql();
  const cql::BootstrapSchema bootstrap = cql::BuildBootstrapSchema(
      {cql.begin(), cql.end()}, cql::DatacentersOf(LayoutOf(loaded.topology, loaded.spec, 0)));
  if (!bootstrap.problems.empty()) {
    std::string text;
    for (const auto& [index, problem] : bootstrap.problems) {
      absl::StrAppend(&text, path, ": schema.cql[", index, "]: ", problem, "\n");
    }
    return absl::InvalidArgumentError(text);
  }
  return loaded;
}

absl::StatusOr<scenario::Scenario> LoadProfile(const std::string& path) {
  std::ifstream file(path);
  if (!file) return absl::NotFoundError(absl::StrCat(path, ": cannot open the profile"));
  std::stringstream text;
  text << file.rdbuf();
  scenario::Scenario profile;
  google::protobuf::TextFormat::ParseInfoTree locations;
  if (absl::Status parsed = ParseTextProto(path, text.str(), profile, locations); !parsed.ok()) return parsed;
  if (!profile.has_network() || !profile.has_storage()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": a profile needs network and storage latencies"));
  }
  return profile;
}

void ApplyProfile(const scenario::Scenario& profile, scenario::Scenario& spec) {
  const auto& network = profile.network();
  if (network.has_intra_dc()) *spec.mutable_network()->mutable_intra_dc() = network.intra_dc();
  if (network.has_intra_node()) *spec.mutable_network()->mutable_intra_node() = network.intra_node();
  const auto& storage = profile.storage();
  if (storage.has_read()) *spec.mutable_storage()->mutable_read() = storage.read();
  if (storage.has_write()) *spec.mutable_storage()->mutable_write() = storage.write();
  if (storage.has_sync()) *spec.mutable_storage()->mutable_sync() = storage.sync();
  if (profile.has_client_machine()) *spec.mutable_client_machine() = profile.client_machine();
}

}  // namespace charybdis::sim
