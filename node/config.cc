#include "node/config.h"

#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/paxos/ballot.h"
#include "core/text_proto.h"
#include "google/protobuf/text_format.h"

namespace charybdis::node {

namespace {

using google::protobuf::TextFormat;

// Collects "FILE:LINE:COLUMN: field: problem" lines.
class Problems {
 public:
  Problems(std::string path, const TextFormat::ParseInfoTree& locations)
      : path_(std::move(path)), locations_(locations) {}

  // `field` of the top-level message (index -1 for a singular field).
  void Top(const std::string& field, int index, const std::string& problem) {
    At(&locations_, NodeConfigFile::descriptor(), field, index, field, problem);
  }
  // `field` of the index-th element of the repeated top-level `parent`.
  void Nested(const std::string& parent, int index, const google::protobuf::Descriptor* type,
              const std::string& field, const std::string& problem) {
    const auto* parent_field = NodeConfigFile::descriptor()->FindFieldByName(parent);
    const TextFormat::ParseInfoTree* tree = locations_.GetTreeForNested(parent_field, index);
    At(tree, type, field, -1, absl::StrCat(parent, "[", index, "].", field), problem);
  }

  const std::string& text() const { return text_; }

 private:
  void At(const TextFormat::ParseInfoTree* tree, const google::protobuf::Descriptor* type,
          const std::string& field, int index, const std::string& name,
          const std::string& problem) {
    // A field the file leaves out has no place: the problem is the file's.
    std::string where = path_;
    const auto* descriptor = type->FindFieldByName(field);
    const bool locatable = descriptor != nullptr && (index >= 0) == descriptor->is_repeated();
    if (tree != nullptr && locatable) {
      const auto location = tree->GetLocation(descriptor, index);
      if (location.line >= 0) absl::StrAppend(&where, ":", location.line + 1, ":", location.column + 1);
    }
    absl::StrAppend(&text_, text_.empty() ? "" : "\n", where, ": ", name, ": ", problem);
  }

  std::string path_;
  const TextFormat::ParseInfoTree& locations_;
  std::string text_;
};

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

}  // namespace

absl::StatusOr<LoadedConfig> LoadConfig(const std::string& path) {
  std::ifstream file(path);
  if (!file) return absl::NotFoundError(absl::StrCat(path, ": cannot open config file"));
  std::stringstream text;
  text << file.rdbuf();
  return ParseConfig(path, text.str());
}

absl::StatusOr<LoadedConfig> ParseConfig(const std::string& path, const std::string& text) {
  LoadedConfig loaded;
  NodeConfigFile& file = loaded.file;
  TextFormat::ParseInfoTree locations;
  if (absl::Status parsed = ParseTextProto(path, text, file, locations); !parsed.ok()) return parsed;

  Problems problems(path, locations);
  if (file.shards() == 0) file.set_shards(1);
  if (file.shards() > kMaxShards) {
    problems.Top("shards", -1, absl::StrCat("must be between 1 and ", kMaxShards));
  }
  if (file.data_directory().empty()) problems.Top("data_directory", -1, "is required");
  if (file.node_id() == 0) problems.Top("node_id", -1, "is required (node ids start at 1)");

  // The members: unique ids, placed, addressed; this node among them.
  std::set<NodeId> ids;
  std::map<std::string, uint32_t> nodes_per_datacenter;
  const Member* self = nullptr;
  const auto* member_type = Member::descriptor();
  for (int i = 0; i < file.member_size(); i++) {
    const Member& member = file.member(i);
    if (member.id() == 0 || member.id() > kMaxNodeId) {
      problems.Nested("member", i, member_type, "id", absl::StrCat("must be between 1 and ", kMaxNodeId));
    }
    if (member.id() != 0 && !ids.insert(member.id()).second) {
      problems.Nested("member", i, member_type, "id", absl::StrCat("node ", member.id(), " is listed twice"));
    }
    if (member.datacenter().empty()) problems.Nested("member", i, member_type, "datacenter", "is required");
    if (member.rack().empty()) problems.Nested("member", i, member_type, "rack", "is required");
    if (!IsHostPort(member.internode_address())) {
      problems.Nested("member", i, member_type, "internode_address",
                      absl::StrCat("\"", member.internode_address(), "\" is not host:port"));
    }
    if (!member.client_address().empty() && !IsHostPort(member.client_address())) {
      problems.Nested("member", i, member_type, "client_address",
                      absl::StrCat("\"", member.client_address(), "\" is not host:port"));
    }
    nodes_per_datacenter[member.datacenter()]++;
    if (member.id() == file.node_id()) self = &member;
  }
  if (file.member_size() == 0) problems.Top("member", -1, "list every node of the cluster");
  if (file.node_id() != 0 && file.member_size() > 0 && self == nullptr) {
    problems.Top("node_id", -1, absl::StrCat("node ", file.node_id(), " is not among the members"));
  }
  loaded.internode_address = file.internode_address();
  loaded.client_address = file.client_address();
  if (self != nullptr) {
    if (loaded.internode_address.empty()) loaded.internode_address = self->internode_address();
    if (loaded.client_address.empty()) loaded.client_address = self->client_address();
  }
  if (!IsHostPort(loaded.internode_address)) {
    problems.Top("internode_address", -1, absl::StrCat("\"", loaded.internode_address, "\" is not host:port"));
  }
  if (!IsHostPort(loaded.client_address)) {
    problems.Top("client_address", -1, absl::StrCat("\"", loaded.client_address, "\" is not host:port"));
  }
  loaded.metrics_address = file.metrics_address();
  if (!loaded.metrics_address.empty() && !IsHostPort(loaded.metrics_address)) {
    problems.Top("metrics_address", -1, absl::StrCat("\"", loaded.metrics_address, "\" is not host:port"));
  }

  // Replication: NetworkTopologyStrategy, per datacenter.
  ClusterLayout layout;
  const auto* replication_type = ReplicationFactor::descriptor();
  for (int i = 0; i < file.replication_size(); i++) {
    const ReplicationFactor& factor = file.replication(i);
    auto nodes = nodes_per_datacenter.find(factor.datacenter());
    if (nodes == nodes_per_datacenter.end()) {
      problems.Nested("replication", i, replication_type, "datacenter",
                      absl::StrCat("no member is in datacenter \"", factor.datacenter(), "\""));
    } else if (factor.replication_factor() < 1 || factor.replication_factor() > nodes->second) {
      problems.Nested("replication", i, replication_type, "replication_factor",
                      absl::StrCat("replication factor ", factor.replication_factor(), " for \"",
                                   factor.datacenter(), "\" must be between 1 and its ",
                                   nodes->second, " nodes"));
    }
    layout.replication.per_datacenter[factor.datacenter()] = factor.replication_factor();
  }
  if (file.replication_size() == 0) problems.Top("replication", -1, "give a replication factor per datacenter");

  const auto* table_type = Table::descriptor();
  for (int i = 0; i < file.table_size(); i++) {
    const Table& table = file.table(i);
    if (table.name().empty()) problems.Nested("table", i, table_type, "name", "is required");
    if (table.column_size() == 0) problems.Nested("table", i, table_type, "column", "give at least one column");
    TableSchema schema{table.name(), {table.column().begin(), table.column().end()}};
    loaded.node.tables[table.name()] = std::move(schema);
  }
  if (!problems.text().empty()) return absl::InvalidArgumentError(problems.text());

  for (NodeId id : ids) {
    for (const Member& member : file.member()) {
      if (member.id() != id) continue;
      layout.nodes.push_back(NodeInfo{id, member.datacenter(), member.rack()});
      if (id != file.node_id()) loaded.peer_internode_addresses[id] = member.internode_address();
    }
  }
  layout.shards_per_node = file.shards();
  if (file.vnodes_per_node() != 0) layout.vnodes_per_node = file.vnodes_per_node();
  layout.token_seed = file.token_seed();

  NodeConfig& node = loaded.node;
  node.id = file.node_id();
  for (NodeId id : ids) {
    if (id != node.id) node.peers.push_back(id);
  }
  node.shards = file.shards();
  node.ring = std::make_shared<const TokenRing>(layout);
  if (file.write_timeout_ms()) node.coordinator.write_timeout = file.write_timeout_ms() * kMillisecond;
  if (file.read_timeout_ms()) node.coordinator.read_timeout = file.read_timeout_ms() * kMillisecond;
  if (file.max_hint_window_ms()) node.coordinator.max_hint_window = file.max_hint_window_ms() * kMillisecond;
  if (file.hint_replay_interval_ms()) {
    node.coordinator.hint_replay_interval = file.hint_replay_interval_ms() * kMillisecond;
  }
  if (file.heartbeat_interval_ms()) {
    node.failure_detector.heartbeat_interval = file.heartbeat_interval_ms() * kMillisecond;
  }
  if (file.convict_after_ms()) node.failure_detector.convict_after = file.convict_after_ms() * kMillisecond;
  return loaded;
}

}  // namespace charybdis::node
