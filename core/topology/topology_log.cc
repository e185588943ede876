#include "core/topology/topology_log.h"

#include <initializer_list>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/env/assert.h"

namespace charybdis::topology {

namespace {

const char* KindName(Entry::Kind kind) {
  switch (kind) {
    case Entry::Kind::kBegin: return "begin";
    case Entry::Kind::kReadNew: return "read_new";
    case Entry::Kind::kFinish: return "finish";
    case Entry::Kind::kRollBack: break;
  }
  CHARYBDIS_ASSERT(kind == Entry::Kind::kRollBack);
  return "roll_back";
}

// The value among `values` whose name (by `name_of`) is `name`.
template <typename Enum>
bool EnumOf(const std::string& name, std::initializer_list<Enum> values, const char* (*name_of)(Enum), Enum& out) {
  for (Enum value : values) {
    if (name == name_of(value)) {
      out = value;
      return true;
    }
  }
  return false;
}

absl::StatusOr<std::string> Column(const std::map<std::string, std::string>& columns, const std::string& name) {
  auto it = columns.find(name);
  if (it == columns.end()) return absl::DataLossError(absl::StrCat("topology log entry without ", name));
  return it->second;
}

absl::StatusOr<NodeId> IdColumn(const std::map<std::string, std::string>& columns, const std::string& name) {
  absl::StatusOr<std::string> text = Column(columns, name);
  if (!text.ok()) return text.status();
  NodeId id = 0;
  if (!absl::SimpleAtoi(*text, &id)) return absl::DataLossError(absl::StrCat("topology log entry: ", name, " is not an id: ", *text));
  return id;
}

absl::Status ReadJoining(const std::map<std::string, std::string>& columns, Member& joining) {
  for (const auto& [name, field] : {std::pair<const char*, std::string*>{"address", &joining.address},
                                    {"datacenter", &joining.datacenter}, {"rack", &joining.rack},
                                    {"client_address", &joining.client_address},
                                    {"cql_address", &joining.cql_address}}) {
    absl::StatusOr<std::string> value = Column(columns, name);
    if (!value.ok()) return value.status();
    *field = *value;
  }
  absl::StatusOr<std::string> tokens = Column(columns, "tokens");
  if (!tokens.ok()) return tokens.status();
  for (absl::string_view text : absl::StrSplit(*tokens, ',', absl::SkipEmpty())) {
    Token token = 0;
    if (!absl::SimpleAtoi(text, &token)) return absl::DataLossError(absl::StrCat("topology log entry: a token is not a number: ", text));
    joining.tokens.push_back(token);
  }
  return absl::OkStatus();
}

// "simple:3", or "network:dc1=3,dc2=1".
std::string ReplicationText(const ReplicationConfig& replication) {
  if (replication.strategy == ReplicationConfig::Strategy::kSimple) {
    return absl::StrCat("simple:", replication.replication_factor);
  }
  return absl::StrCat("network:", absl::StrJoin(replication.per_datacenter, ",", absl::PairFormatter("=")));
}

absl::StatusOr<ReplicationConfig> ReplicationOfText(const std::string& text) {
  const auto malformed = [&text] { return absl::DataLossError(absl::StrCat("topology log entry: a malformed replication: ", text)); };
  ReplicationConfig replication;
  if (absl::StartsWith(text, "simple:")) {
    replication.strategy = ReplicationConfig::Strategy::kSimple;
    if (!absl::SimpleAtoi(text.substr(7), &replication.replication_factor)) return malformed();
    return replication;
  }
  if (!absl::StartsWith(text, "network:")) return malformed();
  for (absl::string_view pair : absl::StrSplit(text.substr(8), ',', absl::SkipEmpty())) {
    std::pair<std::string, std::string> parts = absl::StrSplit(pair, absl::MaxSplits('=', 1));
    uint32_t factor = 0;
    if (parts.first.empty() || !absl::SimpleAtoi(parts.second, &factor)) return malformed();
    replication.per_datacenter[parts.first] = factor;
  }
  return replication;
}

absl::Status ReadReplicating(const std::map<std::string, std::string>& columns, ReplicationMove& replicating) {
  for (const auto& [name, field] : {std::pair<const char*, std::string*>{"keyspace", &replicating.keyspace},
                                    {"statement", &replicating.statement}}) {
    absl::StatusOr<std::string> value = Column(columns, name);
    if (!value.ok()) return value.status();
    *field = *value;
  }
  absl::StatusOr<std::string> created_at = Column(columns, "keyspace_created_at");
  if (!created_at.ok()) return created_at.status();
  if (!absl::SimpleAtoi(*created_at, &replicating.keyspace_created_at)) {
    return absl::DataLossError(absl::StrCat("topology log entry: keyspace_created_at is not a number: ", *created_at));
  }
  for (const auto& [name, field] : {std::pair<const char*, ReplicationConfig*>{"from", &replicating.from},
                                    {"to", &replicating.to}}) {
    absl::StatusOr<std::string> text = Column(columns, name);
    if (!text.ok()) return text.status();
    absl::StatusOr<ReplicationConfig> replication = ReplicationOfText(*text);
    if (!replication.ok()) return replication.status();
    *field = *std::move(replication);
  }
  return absl::OkStatus();
}

}  // namespace

std::string TopologyLogKey(uint64_t sequence) {
  CHARYBDIS_ASSERT(sequence >= 1);  // entry 1 follows the bootstrap topology
  return absl::StrCat("entry ", sequence);
}

std::map<std::string, std::string> EntryColumns(const Entry& entry) {
  std::map<std::string, std::string> columns{{"kind", KindName(entry.kind)},
                                             {"operation", OperationName(entry.operation)},
                                             {"node", absl::StrCat(entry.node)},
                                             {"replaced", absl::StrCat(entry.replaced)}};
  if (entry.kind == Entry::Kind::kBegin) columns["driver"] = absl::StrCat(entry.driver);
  if (entry.kind == Entry::Kind::kBegin &&
      (entry.operation == Operation::kJoin || entry.operation == Operation::kReplace)) {
    columns["address"] = entry.joining.address;
    columns["client_address"] = entry.joining.client_address;
    columns["cql_address"] = entry.joining.cql_address;
    columns["datacenter"] = entry.joining.datacenter;
    columns["rack"] = entry.joining.rack;
    columns["tokens"] = absl::StrJoin(entry.joining.tokens, ",");
  }
  if (entry.kind == Entry::Kind::kBegin && entry.operation == Operation::kReplicate) {
    const ReplicationMove& replicating = entry.replicating;
    columns["keyspace"] = replicating.keyspace;
    columns["keyspace_created_at"] = absl::StrCat(replicating.keyspace_created_at);
    columns["from"] = ReplicationText(replicating.from);
    columns["to"] = ReplicationText(replicating.to);
    columns["statement"] = replicating.statement;
  }
  return columns;
}

absl::StatusOr<Entry> EntryOfColumns(const std::map<std::string, std::string>& columns) {
  Entry entry;
  absl::StatusOr<std::string> kind = Column(columns, "kind");
  if (!kind.ok()) return kind.status();
  if (!EnumOf(*kind, {Entry::Kind::kBegin, Entry::Kind::kReadNew, Entry::Kind::kFinish, Entry::Kind::kRollBack},
              &KindName, entry.kind)) {
    return absl::DataLossError(absl::StrCat("topology log entry of kind ", *kind));
  }
  absl::StatusOr<std::string> operation = Column(columns, "operation");
  if (!operation.ok()) return operation.status();
  if (!EnumOf(*operation,
              {Operation::kJoin, Operation::kDecommission, Operation::kRemove, Operation::kReplace, Operation::kReplicate},
              &OperationName, entry.operation)) {
    return absl::DataLossError(absl::StrCat("topology log entry of operation ", *operation));
  }
  absl::StatusOr<NodeId> node = IdColumn(columns, "node");
  absl::StatusOr<NodeId> replaced = IdColumn(columns, "replaced");
  if (!node.ok()) return node.status();
  if (!replaced.ok()) return replaced.status();
  entry.node = *node;
  entry.replaced = *replaced;
  if (entry.kind == Entry::Kind::kBegin) {
    absl::StatusOr<NodeId> driver = IdColumn(columns, "driver");
    if (!driver.ok()) return driver.status();
    entry.driver = *driver;
  }
  if (entry.kind == Entry::Kind::kBegin &&
      (entry.operation == Operation::kJoin || entry.operation == Operation::kReplace)) {
    entry.joining.id = entry.node;
    if (absl::Status read = ReadJoining(columns, entry.joining); !read.ok()) return read;
  }
  if (entry.kind == Entry::Kind::kBegin && entry.operation == Operation::kReplicate) {
    if (absl::Status read = ReadReplicating(columns, entry.replicating); !read.ok()) return read;
  }
  return entry;
}

TopologyLog::TopologyLog(Topology bootstrap) : topology_(std::move(bootstrap)) {
  CHARYBDIS_ASSERT(topology_.version() == 1);  // the bootstrap topology (docs/topology.md)
}

absl::Status TopologyLog::Append(Entry entry) {
  absl::StatusOr<Topology> next = topology_.Apply(entry);
  entries_.push_back(std::move(entry));
  if (!next.ok()) return next.status();
  CHARYBDIS_ASSERT(next->version() == topology_.version() + 1);
  topology_ = *std::move(next);
  return absl::OkStatus();
}

std::vector<NodeId> TopologyLog::ParticipantsOfNext() const {
  std::vector<NodeId> participants;
  for (const auto& [id, tokens] : topology_.OwnersNow()) participants.push_back(id);
  CHARYBDIS_ASSERT(!participants.empty());  // the last node never leaves
  return participants;
}

}  // namespace charybdis::topology
