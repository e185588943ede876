#include "core/schema/replication.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/env/assert.h"

namespace charybdis::cql {

namespace {

const std::string kSimple = "org.apache.cassandra.locator.SimpleStrategy";
const std::string kNetworkTopology = "org.apache.cassandra.locator.NetworkTopologyStrategy";
const std::string kFactorOption = "replication_factor";

absl::Status Refuse(const std::string& keyspace, const std::string& why) {
  return absl::FailedPreconditionError(absl::StrCat("keyspace ", keyspace, ": ", why));
}

absl::StatusOr<uint32_t> Factor(const std::string& keyspace, const std::string& option, const std::string& text) {
  uint32_t factor = 0;
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || !absl::SimpleAtoi(text, &factor)) {
    return Refuse(keyspace, absl::StrCat("replication factor for ", option, " must be a whole number, not '", text, "'"));
  }
  return factor;
}

uint32_t TotalNodes(const Datacenters& datacenters) {
  uint32_t total = 0;
  for (const auto& [name, nodes] : datacenters) total += nodes;
  return total;
}

absl::StatusOr<std::map<std::string, std::string>> CheckedSimple(const std::string& keyspace,
                                                                 const std::map<std::string, std::string>& options) {
  for (const auto& [option, value] : options) {
    if (option != kFactorOption) return Refuse(keyspace, absl::StrCat("SimpleStrategy takes no option '", option, "'"));
  }
  if (!options.count(kFactorOption)) return Refuse(keyspace, "SimpleStrategy requires a 'replication_factor'");
  absl::StatusOr<uint32_t> factor = Factor(keyspace, kFactorOption, options.at(kFactorOption));
  if (!factor.ok()) return factor.status();
  if (*factor == 0) return Refuse(keyspace, "replication_factor must be at least 1");
  return std::map<std::string, std::string>{{"class", kSimple}, {kFactorOption, absl::StrCat(*factor)}};
}

absl::StatusOr<std::map<std::string, std::string>> CheckedNetworkTopology(
    const std::string& keyspace, std::map<std::string, std::string> options, const Datacenters& datacenters) {
  std::map<std::string, std::string> checked{{"class", kNetworkTopology}};
  if (auto every = options.find(kFactorOption); every != options.end()) {
    // Cassandra 4: a default for the datacenters not named.
    for (const auto& [datacenter, nodes] : datacenters) options.emplace(datacenter, every->second);
    options.erase(kFactorOption);
  }
  uint32_t total = 0;
  for (const auto& [datacenter, value] : options) {
    absl::StatusOr<uint32_t> factor = Factor(keyspace, datacenter, value);
    if (!factor.ok()) return factor.status();
    if (*factor > 0) checked[datacenter] = absl::StrCat(*factor);
    total += *factor;
  }
  if (total == 0) return Refuse(keyspace, "NetworkTopologyStrategy needs at least one replica in some datacenter");
  return checked;
}

}  // namespace

Datacenters DatacentersOf(const ClusterLayout& layout) {
  Datacenters datacenters;
  for (const NodeInfo& node : layout.nodes) datacenters[node.datacenter]++;
  return datacenters;
}

absl::Status CheckFits(const std::string& keyspace, const std::map<std::string, std::string>& replication,
                       const Datacenters& datacenters) {
  const ReplicationConfig config = ReplicationConfigOf(replication);
  if (config.strategy == ReplicationConfig::Strategy::kSimple) {
    const uint32_t nodes = TotalNodes(datacenters);
    if (config.replication_factor <= nodes) return absl::OkStatus();
    return Refuse(keyspace, absl::StrCat("replication_factor ", config.replication_factor,
                                         " must be between 1 and the cluster's ", nodes, " nodes"));
  }
  for (const auto& [datacenter, factor] : config.per_datacenter) {
    auto known = datacenters.find(datacenter);
    if (known == datacenters.end()) return Refuse(keyspace, absl::StrCat("unknown datacenter '", datacenter, "'"));
    if (factor > known->second) {
      return Refuse(keyspace, absl::StrCat("replication factor ", factor, " for ", datacenter, " is more than its ",
                                           known->second, " nodes"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::map<std::string, std::string>> CheckedReplication(const std::string& keyspace,
                                                                      std::map<std::string, std::string> options,
                                                                      const Datacenters& datacenters) {
  auto given = options.find("class");
  if (given == options.end()) return Refuse(keyspace, "missing 'class' option in replication");
  const std::string given_name = given->second;
  std::string strategy = given_name;
  options.erase(given);
  // Drivers and users write the short name or the full one.
  if (strategy.find('.') == std::string::npos) strategy = "org.apache.cassandra.locator." + strategy;
  if (strategy == kSimple) return CheckedSimple(keyspace, options);
  if (strategy == kNetworkTopology) return CheckedNetworkTopology(keyspace, std::move(options), datacenters);
  return Refuse(keyspace, absl::StrCat("unknown replication strategy ", given_name));
}

ReplicationConfig ReplicationConfigOf(const std::map<std::string, std::string>& replication) {
  ReplicationConfig config;
  for (const auto& [option, value] : replication) {
    if (option == "class") continue;
    uint32_t factor = 0;
    const bool parsed = absl::SimpleAtoi(value, &factor);
    CHARYBDIS_ASSERT(parsed);
    if (option == kFactorOption) {
      config.replication_factor = factor;
    } else {
      config.per_datacenter[option] = factor;
    }
  }
  config.strategy = replication.at("class") == kSimple ? ReplicationConfig::Strategy::kSimple
                                                       : ReplicationConfig::Strategy::kNetworkTopology;
  return config;
}

bool IsReplicatedStrategy(const std::string& strategy_class) {
  return strategy_class == kSimple || strategy_class == kNetworkTopology;
}

}  // namespace charybdis::cql
