#include "node/server/config.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/auth/sasl_plain.h"
#include "core/data/tombstone_gc.h"
#include "core/schema/bootstrap.h"
#include "core/env/commitlog_sync.h"
#include "core/paxos/ballot.h"
#include "core/tools/text_proto.h"
#include "google/protobuf/text_format.h"

namespace charybdis::node {

namespace {

using google::protobuf::TextFormat;

// "host:port" with a port in 1..65535.
bool IsHostPort(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  uint32_t port = 0;
  return absl::SimpleAtoi(address.substr(colon + 1), &port) && port >= 1 && port <= 65535;
}

// Ballots name their proposer in a few bits of node and shard.
constexpr uint32_t kMaxShards = BallotLayout::kMaxShards;
constexpr uint32_t kMaxNodeId = BallotLayout::kMaxNodeId;

// "host:port" (or "[v6]:port") on a loopback address. An empty address
// (no such port) counts as loopback: nothing listens.
bool OnLoopback(const std::string& address) {
  if (address.empty()) return true;
  const std::string host = address.substr(0, address.rfind(':'));
  return host.rfind("127.", 0) == 0 || host == "localhost" || host == "[::1]" || host == "::1";
}

}  // namespace

bool CqlOpenToEveryone(const LoadedConfig& config) {
  return !config.cql_auth.required && !OnLoopback(config.cql_address);
}

std::vector<Exposure> ExposuresOf(const LoadedConfig& config) {
  std::vector<Exposure> found;
  if (CqlOpenToEveryone(config)) {
    found.push_back({"cql_open_to_everyone", config.cql_address,
                     "the CQL port listens beyond loopback and asks for no password: anyone who reaches it may "
                     "read, write and drop every table",
                     "auth { required: true } in the node config (docs/security.md)"});
  }
  const bool tls_off = config.tls_clients == Tls::OFF;
  if (config.cql_auth.required && tls_off && !OnLoopback(config.cql_address)) {
    found.push_back({"cql_passwords_in_clear", config.cql_address,
                     "the CQL port listens beyond loopback and takes passwords without TLS: anyone on the path "
                     "reads them",
                     "tls { clients: REQUIRED ... } in the node config (docs/security.md)"});
  }
  if (!config.cql_auth.required && !OnLoopback(config.client_address)) {
    found.push_back({"client_api_open_to_everyone", config.client_address,
                     "the gRPC client API listens beyond loopback and asks for no password: anyone who reaches "
                     "it may read and write every table, repair, compact and change the topology",
                     "auth { required: true } in the node config (docs/security.md)"});
  }
  if (config.cql_auth.required && tls_off && !OnLoopback(config.client_address)) {
    found.push_back({"client_api_passwords_in_clear", config.client_address,
                     "the gRPC client API listens beyond loopback and takes passwords without TLS (it speaks "
                     "TLS when the CQL port does): anyone on the path reads them",
                     "tls { clients: REQUIRED ... } in the node config (docs/security.md)"});
  }
  if (!config.tls_internode && !OnLoopback(config.internode_address)) {
    found.push_back({"internode_in_clear", config.internode_address,
                     "the internode port listens beyond loopback without TLS: anyone who reaches it is taken "
                     "for a peer, and the rows replicas exchange cross the network in clear",
                     "tls { internode: true ... } in the node config (docs/security.md)"});
  }
  return found;
}

absl::StatusOr<LoadedConfig> LoadConfig(const std::string& path) {
  std::ifstream file(path);
  if (!file) return absl::NotFoundError(absl::StrCat(path, ": cannot open config file"));
  std::stringstream text;
  text << file.rdbuf();
  return ParseConfig(path, text.str());
}

namespace {

// The members: unique ids, placed, addressed. Returns their ids, and counts
// them per datacenter.
std::set<NodeId> CheckMembers(const NodeConfigFile& file, TextProtoProblems& problems,
                              std::map<std::string, uint32_t>& nodes_per_datacenter) {
  std::set<NodeId> ids;
  for (int i = 0; i < file.member_size(); i++) {
    const Member& member = file.member(i);
    if (member.id() == 0 || member.id() > kMaxNodeId) {
      problems.Add({{"member", i}, {"id"}}, absl::StrCat("must be between 1 and ", kMaxNodeId));
    }
    if (member.id() != 0 && !ids.insert(member.id()).second) {
      problems.Add({{"member", i}, {"id"}}, absl::StrCat("node ", member.id(), " is listed twice"));
    }
    if (member.datacenter().empty()) problems.Add({{"member", i}, {"datacenter"}}, "is required");
    if (member.rack().empty()) problems.Add({{"member", i}, {"rack"}}, "is required");
    if (!IsHostPort(member.internode_address())) {
      problems.Add({{"member", i}, {"internode_address"}},
                   absl::StrCat("\"", member.internode_address(), "\" is not host:port"));
    }
    if (!member.client_address().empty() && !IsHostPort(member.client_address())) {
      problems.Add({{"member", i}, {"client_address"}},
                   absl::StrCat("\"", member.client_address(), "\" is not host:port"));
    }
    nodes_per_datacenter[member.datacenter()]++;
  }
  if (file.member_size() == 0) problems.Add({{"member"}}, "list every node of the cluster");
  return ids;
}

// This node's own addresses: its own fields, else its member entry's.
void CheckAddresses(const NodeConfigFile& file, TextProtoProblems& problems, LoadedConfig& loaded) {
  const Member* self = nullptr;
  for (const Member& member : file.member()) {
    if (member.id() == file.node_id()) self = &member;
  }
  if (file.node_id() != 0 && file.member_size() > 0 && self == nullptr && !file.has_new_node()) {
    problems.Add({{"node_id"}}, absl::StrCat("node ", file.node_id(),
                                             " is not among the members (a node that joins names its place in new_node)"));
  }
  if (self != nullptr && file.has_new_node()) {
    problems.Add({{"new_node"}}, absl::StrCat("node ", file.node_id(), " is a member already: it does not join"));
  }
  if (file.has_new_node()) {
    if (file.new_node().datacenter().empty()) problems.Add({{"new_node"}, {"datacenter"}}, "is required");
    if (file.new_node().rack().empty()) problems.Add({{"new_node"}, {"rack"}}, "is required");
    if (file.new_node().replaces() == file.node_id() && file.node_id() != 0) {
      problems.Add({{"new_node"}, {"replaces"}}, "a node cannot replace itself");
    }
  }
  loaded.internode_address = file.internode_address();
  loaded.client_address = file.client_address();
  if (self != nullptr) {
    if (loaded.internode_address.empty()) loaded.internode_address = self->internode_address();
    if (loaded.client_address.empty()) loaded.client_address = self->client_address();
  }
  auto check = [&](const char* field, const std::string& address) {
    if (!IsHostPort(address)) {
      problems.Add({{field}}, absl::StrCat("\"", address, "\" is not host:port"));
    }
  };
  check("internode_address", loaded.internode_address);
  check("client_address", loaded.client_address);
  loaded.metrics_address = file.metrics_address();
  if (!loaded.metrics_address.empty()) check("metrics_address", loaded.metrics_address);
  loaded.cql_address = file.cql_address();
  if (loaded.cql_address.empty() && self != nullptr) loaded.cql_address = self->cql_address();
  if (!loaded.cql_address.empty()) check("cql_address", loaded.cql_address);
  if (file.cql_shard_aware_port() > 65535) problems.Add({{"cql_shard_aware_port"}}, "is not a port (1 to 65535)");
  if (file.cql_shard_aware_port() != 0 && loaded.cql_address.empty()) {
    problems.Add({{"cql_shard_aware_port"}}, "needs a cql_address (its host)");
  }
}

// Replication: NetworkTopologyStrategy, per datacenter.
void CheckReplication(const NodeConfigFile& file, TextProtoProblems& problems,
                      const std::map<std::string, uint32_t>& nodes_per_datacenter,
                      ClusterLayout& layout) {
  for (int i = 0; i < file.replication_size(); i++) {
    const ReplicationFactor& factor = file.replication(i);
    auto nodes = nodes_per_datacenter.find(factor.datacenter());
    if (nodes == nodes_per_datacenter.end()) {
      problems.Add({{"replication", i}, {"datacenter"}},
                   absl::StrCat("no member is in datacenter \"", factor.datacenter(), "\""));
    } else if (factor.replication_factor() < 1 || factor.replication_factor() > nodes->second) {
      problems.Add({{"replication", i}, {"replication_factor"}},
                   absl::StrCat("replication factor ", factor.replication_factor(), " for \"",
                                factor.datacenter(), "\" must be between 1 and its ",
                                nodes->second, " nodes"));
    }
    layout.replication.per_datacenter[factor.datacenter()] = factor.replication_factor();
  }
  if (file.replication_size() == 0) {
    problems.Add({{"replication"}}, "give a replication factor per datacenter");
  }
}

void CheckTables(const NodeConfigFile& file, TextProtoProblems& problems, NodeConfig& node) {
  for (int i = 0; i < file.table_size(); i++) {
    const Table& table = file.table(i);
    if (table.name().empty()) problems.Add({{"table", i}, {"name"}}, "is required");
    if (table.column_size() == 0) problems.Add({{"table", i}, {"column"}}, "give at least one column");
    TableSchema schema{table.name(), {table.column().begin(), table.column().end()}};
    const absl::StatusOr<TombstoneGc> gc = TombstoneGcOf(
        table.tombstone_gc(), table.has_gc_grace_seconds() ? std::optional<uint32_t>(table.gc_grace_seconds()) : std::nullopt,
        table.has_propagation_delay_seconds() ? std::optional<uint32_t>(table.propagation_delay_seconds()) : std::nullopt);
    if (gc.ok()) {
      schema.gc = *gc;
    } else {
      problems.Add({{"table", i}, {"tombstone_gc"}}, std::string(gc.status().message()));
    }
    node.tables[table.name()] = std::move(schema);
  }
}

// The cql_schema statements (core/schema/bootstrap.h). Their storage tables
// are the schema log's to tell coordinators (core/schema/schema_log.h).
std::shared_ptr<const cql::Schema> BootstrapCqlSchema(const NodeConfigFile& file, const cql::Datacenters& datacenters,
                                                      TextProtoProblems& problems, const NodeConfig& node) {
  cql::BootstrapSchema bootstrap = cql::BuildBootstrapSchema(
      {file.cql_schema().begin(), file.cql_schema().end()}, datacenters);
  for (const auto& [index, problem] : bootstrap.problems) problems.Add({{"cql_schema", index}}, problem);
  for (const auto& [name, columns] : bootstrap.storage_tables) {
    if (node.tables.count(name)) {
      problems.Add({{"cql_schema"}}, absl::StrCat("CQL table ", name, " has the name of a table {} entry"));
    }
  }
  return bootstrap.schema;
}

// The CQL port's authentication, with the superuser's password read from
// its file (relative to the config file's directory). A password file
// others may read is refused, as ssh refuses such a key.
void CheckAuth(const std::string& path, const NodeConfigFile& file, TextProtoProblems& problems,
               LoadedConfig& loaded) {
  const Auth& auth = file.auth();
  loaded.cql_auth.required = auth.required();
  if (auth.required() && loaded.cql_address.empty()) {
    problems.Add({{"auth"}, {"required"}}, "needs cql_address: logins, of CQL and gRPC clients alike, are checked there");
  }
  if (!auth.superuser().empty()) loaded.cql_auth.superuser = auth.superuser();
  if (auth.superuser().size() > auth::kMaxRoleNameBytes) {
    problems.Add({{"auth"}, {"superuser"}}, absl::StrCat("has at most ", auth::kMaxRoleNameBytes, " bytes"));
  }
  if (auth.superuser_password_file().empty()) return;
  if (!auth.required()) {
    problems.Add({{"auth"}, {"superuser_password_file"}}, "needs required: true (with auth off no one logs in)");
    return;
  }
  std::filesystem::path password_path(auth.superuser_password_file());
  if (password_path.is_relative()) password_path = std::filesystem::path(path).parent_path() / password_path;
  struct stat status {};
  if (stat(password_path.c_str(), &status) != 0) {
    problems.Add({{"auth"}, {"superuser_password_file"}}, absl::StrCat("cannot read ", password_path.string()));
    return;
  }
  if ((status.st_mode & 077) != 0) {
    problems.Add({{"auth"}, {"superuser_password_file"}},
                 absl::StrCat(password_path.string(), " may be read by others (mode ",
                              absl::StrFormat("%04o", status.st_mode & 07777), "): chmod 600 it"));
    return;
  }
  std::ifstream in(password_path);
  std::string password;
  std::getline(in, password);
  if (!password.empty() && password.back() == '\r') password.pop_back();
  if (password.empty() || password.size() > auth::kMaxPasswordBytes || password.find('\0') != std::string::npos) {
    problems.Add({{"auth"}, {"superuser_password_file"}},
                 absl::StrCat(password_path.string(), ": its first line must hold a password of 1 to ",
                              auth::kMaxPasswordBytes, " bytes, without NUL"));
    return;
  }
  loaded.cql_auth.superuser_password = password;
}

// TLS: the three files (relative to the config file's directory) must be
// there when anything is turned on; OpenSSL reads them at start.
void CheckTls(const std::string& path, const NodeConfigFile& file, TextProtoProblems& problems,
              LoadedConfig& loaded) {
  if (!file.has_tls()) return;
  const Tls& tls = file.tls();
  if (tls.clients() == Tls::OFF && !tls.internode()) {
    problems.Add({{"tls"}}, "turns nothing on: set clients (OPTIONAL or REQUIRED) or internode: true");
    return;
  }
  TlsFiles files;
  const std::tuple<const char*, const std::string&, std::string*> wanted[] = {
      {"certificate_file", tls.certificate_file(), &files.certificate_file},
      {"private_key_file", tls.private_key_file(), &files.private_key_file},
      {"ca_file", tls.ca_file(), &files.ca_file}};
  for (const auto& [name, given, into] : wanted) {
    if (given.empty()) {
      problems.Add({{"tls"}, {name}}, "is required with TLS on");
      continue;
    }
    std::filesystem::path resolved(given);
    if (resolved.is_relative()) resolved = std::filesystem::path(path).parent_path() / resolved;
    if (access(resolved.c_str(), R_OK) != 0) {
      problems.Add({{"tls"}, {name}}, absl::StrCat("cannot read ", resolved.string()));
      continue;
    }
    *into = resolved.string();
  }
  loaded.tls_files = files;
  loaded.tls_clients = tls.clients();
  loaded.tls_internode = tls.internode();
}

// What a checked file means for core/: the ring, the peers, the timeouts.
void BuildNodeConfig(const NodeConfigFile& file, const std::set<NodeId>& ids, ClusterLayout layout,
                     LoadedConfig& loaded) {
  for (NodeId id : ids) {
    for (const Member& member : file.member()) {
      if (member.id() != id) continue;
      layout.nodes.push_back(NodeInfo{id, member.datacenter(), member.rack()});
      if (id != file.node_id()) loaded.peer_internode_addresses[id] = member.internode_address();
      loaded.node.member_addresses[id] = member.internode_address();
    }
  }
  layout.shards_per_node = file.shards();
  if (file.vnodes_per_node() != 0) layout.vnodes_per_node = file.vnodes_per_node();
  layout.token_seed = file.token_seed();

  NodeConfig& node = loaded.node;
  node.id = file.node_id();
  if (file.has_new_node()) {
    node.new_node = NewNode{file.new_node().datacenter(), file.new_node().rack(), loaded.internode_address,
                            loaded.client_address, loaded.cql_address, file.new_node().replaces()};
  }
  for (NodeId id : ids) {
    if (id != node.id) node.peers.push_back(id);
  }
  node.shards = file.shards();
  node.ring = std::make_shared<const TokenRing>(layout);
  auto set_ms = [](uint64_t ms, Nanos& duration) {
    if (ms != 0) duration = static_cast<Nanos>(ms) * kMillisecond;
  };
  set_ms(file.write_timeout_ms(), node.coordinator.write_timeout);
  set_ms(file.read_timeout_ms(), node.coordinator.read_timeout);
  set_ms(file.max_hint_window_ms(), node.coordinator.max_hint_window);
  set_ms(file.hint_replay_interval_ms(), node.coordinator.hint_replay_interval);
  set_ms(file.compaction_interval_ms(), node.compaction_interval);
  node.coordinator.lwt_batching = !file.disable_lwt_batching();
  if (file.read_cache_mb() != 0) node.read_cache_bytes = size_t{file.read_cache_mb()} << 20;
  if (file.disable_read_cache()) node.read_cache_bytes = 0;
  set_ms(file.heartbeat_interval_ms(), node.failure_detector.heartbeat_interval);
  set_ms(file.convict_after_ms(), node.failure_detector.convict_after);
}

}  // namespace

absl::StatusOr<LoadedConfig> ParseConfig(const std::string& path, const std::string& text) {
  LoadedConfig loaded;
  NodeConfigFile& file = loaded.file;
  TextFormat::ParseInfoTree locations;
  if (absl::Status parsed = ParseTextProto(path, text, file, locations); !parsed.ok()) return parsed;

  TextProtoProblems problems(path, NodeConfigFile::descriptor(), locations);
  if (file.shards() == 0) file.set_shards(1);
  if (file.shards() > kMaxShards) {
    problems.Add({{"shards"}}, absl::StrCat("must be between 1 and ", kMaxShards));
  }
  if (file.data_directory().empty()) problems.Add({{"data_directory"}}, "is required");
  if (file.node_id() == 0) problems.Add({{"node_id"}}, "is required (node ids start at 1)");
  if (const std::string problem = CommitlogSyncPeriodProblem(file.commitlog_sync()); !problem.empty()) {
    problems.Add({{"commitlog_sync"}, {"period_ms"}}, problem);
  }
  std::map<std::string, uint32_t> nodes_per_datacenter;
  const std::set<NodeId> ids = CheckMembers(file, problems, nodes_per_datacenter);
  CheckAddresses(file, problems, loaded);
  ClusterLayout layout;
  CheckReplication(file, problems, nodes_per_datacenter, layout);
  CheckTables(file, problems, loaded.node);
  CheckAuth(path, file, problems, loaded);
  CheckTls(path, file, problems, loaded);
  loaded.node.cql_bootstrap = BootstrapCqlSchema(file, nodes_per_datacenter, problems, loaded.node);
  if (!problems.text().empty()) return absl::InvalidArgumentError(problems.text());
  BuildNodeConfig(file, ids, std::move(layout), loaded);
  return loaded;
}

}  // namespace charybdis::node
