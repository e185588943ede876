#include "sim/topology_workload.h"

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "core/topology/topology_log.h"

namespace charybdis::sim {

namespace {

constexpr uint64_t kDefaultTimeoutMs = 30000;

}  // namespace

struct TopologyWorkload::Operator {
  NodeId id = 0;
  uint32_t host = 0;
  uint32_t remaining = 0;
  uint64_t next_request_id = 0;
  uint64_t outstanding = 0;  // request id awaiting an answer, 0 if none
  TopologyEntryColumns entry;
};

TopologyWorkload::TopologyWorkload(Simulator& simulator, Cluster& cluster, std::string name,
                                   const scenario::TopologyWorkload& spec, Random random)
    : simulator_(simulator), cluster_(cluster), name_(std::move(name)), spec_(spec), random_(random) {
  const ClusterLayout& layout = cluster.node(1).config().ring->layout();
  CHARYBDIS_ASSERT(layout.nodes.size() == cluster.size());
  const NodeInfo& last = layout.nodes.back();
  movable_ = topology::Member{last.id, "", last.datacenter, last.rack, {}, topology::NodeState::kNormal};
  // Ids no simulated host has (clients take those after the nodes'): the
  // newcomers never start, and what is sent to them is lost.
  new_ids_[0] = kNewcomerIds;
  new_ids_[1] = kNewcomerIds + 1;
  for (uint32_t i = 0; i < spec.operators(); i++) {
    auto op = std::make_unique<Operator>();
    op->id = cluster.AddClient(0);
    op->host = SimNetwork::HostOf(op->id);
    op->remaining = spec.changes_per_operator();
    Operator* raw = op.get();
    cluster.network().SetReceiver(Address{op->id, 0}, [this, raw](const Envelope& message) { OnReply(*raw, message); });
    operators_.push_back(std::move(op));
  }
}

TopologyWorkload::~TopologyWorkload() {
  for (auto& op : operators_) cluster_.network().ClearReceivers(op->host);
}

void TopologyWorkload::Start() {
  const Nanos start = static_cast<Nanos>(spec_.start_ms()) * kMillisecond;
  for (auto& op : operators_) {
    Operator* raw = op.get();
    simulator_.Schedule(start, EventTag{EventKind::kClient, raw->host, 0, 0}, true, [this, raw] { SendNext(*raw); });
  }
}

topology::Entry TopologyWorkload::DrawEntry() {
  using topology::Entry;
  using topology::Operation;
  constexpr Operation kOperations[] = {Operation::kJoin, Operation::kDecommission, Operation::kRemove,
                                       Operation::kReplace};
  Entry entry;
  const uint64_t kind = random_.Below(20);
  entry.kind = kind < 7 ? Entry::Kind::kBegin : kind < 11 ? Entry::Kind::kReadNew
             : kind < 16 ? Entry::Kind::kFinish : Entry::Kind::kRollBack;
  entry.operation = kOperations[random_.Below(4)];
  const NodeId newcomer = new_ids_[random_.Below(2)];
  const bool arrives = entry.operation == Operation::kJoin || entry.operation == Operation::kReplace;
  entry.node = arrives ? newcomer : movable_.id;
  if (entry.operation == Operation::kReplace) entry.replaced = movable_.id;
  // Any node drives it (operation_driver.h), or none, and the operators'
  // own later stages race the driver's.
  if (entry.kind == Entry::Kind::kBegin) entry.driver = static_cast<NodeId>(random_.Below(cluster_.size() + 1));
  if (entry.kind == Entry::Kind::kBegin && arrives) {
    entry.joining = movable_;
    entry.joining.id = newcomer;
    entry.joining.address = absl::StrCat("sim-node-", newcomer);
    if (entry.operation == Operation::kJoin) {
      const uint32_t vnodes = cluster_.node(1).config().ring->layout().vnodes_per_node;
      for (uint32_t i = 0; i < vnodes; i++) entry.joining.tokens.push_back(static_cast<Token>(random_.Next()));
    }
  }
  return entry;
}

void TopologyWorkload::SendNext(Operator& op) {
  CHARYBDIS_ASSERT(op.outstanding == 0);
  if (op.remaining == 0) {
    operators_done_++;
    CHARYBDIS_ASSERT(operators_done_ <= operators_.size());
    return;
  }
  op.remaining--;
  sent_++;
  const uint64_t request_id = ++op.next_request_id;
  op.outstanding = request_id;
  op.entry = topology::EntryColumns(DrawEntry());
  Envelope message;
  ClientRequest* request = message.mutable_client_request();
  request->set_request_id(request_id);
  for (const auto& [column, value] : op.entry) (*request->mutable_topology_change()->mutable_entry())[column] = value;
  const NodeId target = static_cast<NodeId>(1 + random_.Below(cluster_.size()));
  const ShardId shard = static_cast<ShardId>(random_.Below(cluster_.topology().shards_per_node));
  cluster_.network().Send(Address{op.id, 0}, Address{target, shard}, std::move(message));
  const uint64_t timeout_ms = spec_.timeout_ms() != 0 ? spec_.timeout_ms() : kDefaultTimeoutMs;
  Operator* raw = &op;
  simulator_.Schedule(simulator_.now() + static_cast<Nanos>(timeout_ms) * kMillisecond,
                      EventTag{EventKind::kClient, op.host, 0, request_id}, true,
                      [this, raw, request_id] { OnTimeout(*raw, request_id); });
}

void TopologyWorkload::OnReply(Operator& op, const Envelope& message) {
  CHARYBDIS_ASSERT(message.has_client_response());
  const ClientResponse& response = message.client_response();
  if (response.request_id() != op.outstanding) return;  // late (after its timeout) or duplicated
  op.outstanding = 0;
  if (response.code() == ClientResponse::OK) {
    acknowledged_.push_back(AcknowledgedTopologyChange{response.topology_sequence(), op.entry});
  } else if (response.code() == ClientResponse::INVALID_REQUEST) {
    refused_++;
  } else {
    failed_++;
  }
  ThinkThenSend(op);
}

void TopologyWorkload::OnTimeout(Operator& op, uint64_t request_id) {
  if (op.outstanding != request_id) return;  // answered in time
  timeouts_++;
  op.outstanding = 0;
  SendNext(op);
}

void TopologyWorkload::ThinkThenSend(Operator& op) {
  Operator* raw = &op;
  simulator_.Schedule(simulator_.now() + static_cast<Nanos>(spec_.think_time_ms()) * kMillisecond,
                      EventTag{EventKind::kClient, op.host, 0, 0}, true, [this, raw] { SendNext(*raw); });
}

nlohmann::json TopologyWorkload::Results() const {
  return nlohmann::json{{"name", name_},         {"kind", "topology"}, {"done", done()},
                        {"changes", sent_},      {"acknowledged", acknowledged_.size()},
                        {"refused", refused_},   {"failed", failed_},  {"timeouts", timeouts_}};
}

std::vector<CheckResult> TopologyWorkload::Checks() const {
  std::map<uint32_t, std::vector<TopologyEntryColumns>> logs;
  for (NodeId id = 1; id <= cluster_.size(); id++) {
    const SimNode& node = cluster_.node(id);
    if (!node.running()) continue;
    std::vector<TopologyEntryColumns>& log = logs[id];
    for (const topology::Entry& entry : node.TopologyLog().entries()) log.push_back(topology::EntryColumns(entry));
  }
  std::vector<TopologyEntryColumns> longest;
  for (const auto& [id, log] : logs) {
    if (log.size() > longest.size()) longest = log;
  }
  return {CheckTopologyLogsAgree(name_, logs), CheckTopologyLogsConverge(name_, logs),
          CheckAcknowledgedTopologyChanges(name_, longest, acknowledged_), CheckShardsFollow()};
}

// Every shard of a running node holds shard 0's log: the data path of
// each shard will follow the topology.
CheckResult TopologyWorkload::CheckShardsFollow() const {
  const std::string check = absl::StrCat(name_, ".shards_follow_topology_log");
  uint32_t shards_checked = 0;
  for (NodeId id = 1; id <= cluster_.size(); id++) {
    const SimNode& node = cluster_.node(id);
    if (!node.running()) continue;
    const uint64_t sequence = node.TopologyLog().sequence();
    for (ShardId shard = 1; shard < node.config().shards; shard++, shards_checked++) {
      if (node.TopologyLog(shard).sequence() == sequence) continue;
      return CheckResult{check, false,
                         absl::StrCat("node ", id, "'s shard ", shard, " holds ", node.TopologyLog(shard).sequence(),
                                      " entries of the topology log, shard 0 ", sequence)};
    }
  }
  return CheckResult{check, true, absl::StrCat(shards_checked, " shards other than 0 hold their shard 0's log")};
}

}  // namespace charybdis::sim
