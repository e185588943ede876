#include "sim/kv_workload.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "core/request/consistency.h"
#include "core/data/token.h"
#include "core/telemetry/percentile.h"

namespace charybdis::sim {

namespace {

constexpr Nanos kDefaultClientTimeout = 10 * kSecond;
// After a client-side timeout, a client avoids that coordinator for a while,
// as drivers do with hosts that stop answering.
constexpr Nanos kAvoidAfterTimeout = 2 * kSecond;

const char* CodeName(ClientResponse::Code code) {
  return ClientResponse::Code_Name(code).c_str();
}

}  // namespace

struct KvWorkload::Client {
  KvClientMemory memory;  // what the shared client model remembers
  NodeId id = 0;
  uint32_t host = 0;
  uint64_t process = 0;
  uint32_t remaining = 0;
  std::optional<Operation> read_next;
  uint64_t step = 0;  // lock-step: even steps read, odd steps write
  std::map<NodeId, Nanos> avoid_until;

  bool in_flight = false;
  uint64_t request_id = 0;
  EventId timeout;
  Operation op;
  Address coordinator;
  Address answered_by;  // the shard whose answer completed the operation
  Nanos started = 0;
  int64_t client_timestamp_us = 0;  // the USING TIMESTAMP it sent (0: none)
};

KvWorkload::KvWorkload(Simulator& simulator, Cluster& cluster, std::string name,
                       const scenario::KvWorkload& spec, const scenario::ClientMachine& client_machine,
                       std::string column, Random random, History& history, uint64_t& next_process)
    : simulator_(simulator),
      cluster_(cluster),
      name_(std::move(name)),
      spec_(spec),
      random_(random),
      client_machine_(client_machine),
      history_(history),
      next_process_(next_process),
      table_(spec.table()),
      column_(std::move(column)) {
  const int datacenter =
      spec.datacenter().empty() ? 0 : cluster.topology().DatacenterIndex(spec.datacenter());
  CHARYBDIS_ASSERT(datacenter >= 0);
  datacenter_ = cluster.topology().datacenters[datacenter];
  for (uint32_t i = 0; i < spec.clients(); i++) {
    auto client = std::make_unique<Client>();
    client->memory.index = i;
    client->memory.sweep_next = i;
    client->id = cluster.AddClient(static_cast<uint32_t>(datacenter));
    client->host = SimNetwork::HostOf(client->id);
    client->process = next_process_++;
    client->remaining = spec.operations_per_client();
    Client* raw = client.get();
    cluster.network().SetReceiver(Address{client->id, 0}, [this, raw](const Envelope& message) {
      OnResponse(*raw, message);
    });
    clients_.push_back(std::move(client));
  }
}

KvWorkload::~KvWorkload() {
  for (auto& client : clients_) cluster_.network().ClearReceivers(client->host);
}

void KvWorkload::Start() {
  const Nanos start = std::max(simulator_.now(), static_cast<Nanos>(spec_.start_ms()) * kMillisecond);
  for (auto& client : clients_) {
    Client* raw = client.get();
    simulator_.Schedule(start, EventTag{EventKind::kClient, raw->host, 0, 0}, true,
                        [this, raw] { Next(*raw); });
  }
}

KvWorkload::Operation KvWorkload::LockStepOperation(Client& client) {
  Operation op;
  op.key = "k0";
  if (client.step % 2 == 0) {
    op.function = HistoryOp::Function::kRead;
    op.consistency = static_cast<ConsistencyLevel>(spec_.read_consistency(0));
    return op;
  }
  op.function = HistoryOp::Function::kCas;
  op.lwt = true;
  op.consistency = SerialLevelOf(spec_);
  auto seen = client.memory.last_seen.find(op.key);
  if (seen != client.memory.last_seen.end()) op.expected = seen->second;
  return op;
}

void KvWorkload::ArriveAtBarrier(Client& client) {
  const size_t arrived = ++barrier_arrivals_[client.step];
  client.step++;
  if (arrived < clients_.size()) return;
  barrier_arrivals_.erase(client.step - 1);
  for (auto& waiting : clients_) ScheduleNext(*waiting);
}

void KvWorkload::ScheduleNext(Client& client) {
  Client* raw = &client;
  simulator_.Schedule(simulator_.now() + static_cast<Nanos>(spec_.think_time_ms()) * kMillisecond,
                      EventTag{EventKind::kClient, client.host, 0, 0}, true,
                      [this, raw] { Next(*raw); });
}

void KvWorkload::Next(Client& client) {
  CHARYBDIS_ASSERT(!client.in_flight);
  if (first_start_ < 0) first_start_ = simulator_.now();
  if (spec_.lock_step_cas()) {
    if (client.step % 2 == 0 && client.remaining == 0) {
      clients_done_++;
      return;
    }
    if (client.step % 2 == 1) client.remaining--;
    client.op = LockStepOperation(client);
  } else if (client.read_next) {
    client.op = *client.read_next;
    client.read_next.reset();
  } else if (Sweeps(spec_) ? client.memory.sweep_next >= spec_.key_count() : client.remaining == 0) {
    clients_done_++;
    CHARYBDIS_ASSERT(clients_done_ <= clients_.size());
    return;
  } else {
    if (!Sweeps(spec_)) client.remaining--;
    client.op = NextKvOperation(spec_, name_, client.memory, random_);
  }
  Issue(client);
}

Address KvWorkload::CoordinatorFor(Client& client, const std::string& key) {
  const Token token = TokenOf(key);
  const uint32_t shards = cluster_.topology().shards_per_node;
  const Nanos now = simulator_.now();
  auto usable = [&](NodeId node) {
    auto it = client.avoid_until.find(node);
    return it == client.avoid_until.end() || it->second <= now;
  };
  auto allowed = [&](NodeId node) {
    return spec_.coordinator_size() == 0 ||
           std::find(spec_.coordinator().begin(), spec_.coordinator().end(), node) !=
               spec_.coordinator().end();
  };
  // Like a driver: replicas of the key in the local datacenter when
  // shard-aware (for Paxos, the primary replica, so that same-partition
  // requests meet on one coordinator shard), else any local node; hosts
  // that just timed out are avoided.
  std::vector<NodeId> candidates;
  const NodeId primary = cluster_.ring()->PrimaryReplicaOf(token);
  const bool paxos = client.op.lwt || IsSerial(client.op.consistency);
  if (spec_.shard_aware() && paxos && usable(primary) && allowed(primary)) {
    candidates.push_back(primary);
  }
  for (NodeId node : spec_.shard_aware() && candidates.empty() ? cluster_.ring()->ReplicasOf(token)
                                                                : std::vector<NodeId>{}) {
    if (cluster_.ring()->layout().node(node).datacenter == datacenter_ && usable(node) &&
        allowed(node)) {
      candidates.push_back(node);
    }
  }
  if (candidates.empty()) {
    for (const NodeInfo& node : cluster_.ring()->layout().nodes) {
      if (node.datacenter == datacenter_ && usable(node.id) && allowed(node.id)) {
        candidates.push_back(node.id);
      }
    }
  }
  if (candidates.empty()) {
    for (const NodeInfo& node : cluster_.ring()->layout().nodes) {
      if (allowed(node.id)) candidates.push_back(node.id);
    }
  }
  const NodeId node = candidates[random_.Below(candidates.size())];
  const ShardId shard = spec_.shard_aware() ? ShardOf(token, shards)
                                            : static_cast<ShardId>(random_.Below(shards));
  return Address{node, shard};
}

void KvWorkload::Issue(Client& client) {
  Operation& op = client.op;
  op.value = KvValue(spec_, name_, client.memory.index, ++client.request_id);
  HistoryOp invoke = KvHistoryEvent(op, client.process, HistoryOp::Type::kInvoke, table_);
  invoke.time = simulator_.now();
  invoke.datacenter = datacenter_;
  int64_t client_timestamp_us = 0;
  const uint64_t granularity_us = spec_.client_timestamp_granularity_us();
  if (granularity_us > 0 && !op.lwt && op.function != HistoryOp::Function::kRead) {
    // USING TIMESTAMP from a coarse client clock: writes in one slot tie.
    const auto now_us = static_cast<uint64_t>(simulator_.now() / kMicrosecond);
    client_timestamp_us = static_cast<int64_t>(std::max<uint64_t>(now_us / granularity_us * granularity_us, 1));
    invoke.client_timestamp = true;
  }
  client.client_timestamp_us = client_timestamp_us;
  Envelope message;
  *message.mutable_client_request() = KvRequest(table_, column_, op, client_timestamp_us);
  message.mutable_client_request()->set_request_id(client.request_id);
  client.coordinator = CoordinatorFor(client, op.key);
  invoke.coordinator_node = client.coordinator.node;
  history_.push_back(std::move(invoke));
  client.in_flight = true;
  client.started = simulator_.now();
  if (client_machine_.modelled()) {
    // It leaves once the client machine has had the CPU for it; its
    // latency counts from now, as a real client's clock does.
    // One that timed out meanwhile is not sent, as a real client does
    // not send past its deadline.
    Client* raw = &client;
    const uint64_t request_id = client.request_id;
    simulator_.Schedule(client_machine_.SendTime(simulator_.now(), random_),
                        EventTag{EventKind::kClient, client.host, 0, request_id}, true,
                        [this, raw, request_id, message = std::move(message)]() mutable {
                          // Still in flight: its coordinator is the one chosen above.
                          if (!raw->in_flight || raw->request_id != request_id) return;
                          cluster_.network().Send(Address{raw->id, 0}, raw->coordinator, std::move(message));
                        });
  } else {
    cluster_.network().Send(Address{client.id, 0}, client.coordinator, std::move(message));
  }

  const Nanos timeout = spec_.timeout_ms() ? static_cast<Nanos>(spec_.timeout_ms()) * kMillisecond
                                           : kDefaultClientTimeout;
  Client* raw = &client;
  const uint64_t request_id = client.request_id;
  client.timeout =
      simulator_.Schedule(simulator_.now() + timeout,
                          EventTag{EventKind::kClient, client.host, 0, request_id}, true,
                          [this, raw, request_id] { OnTimeout(*raw, request_id); });
}

void KvWorkload::OnResponse(Client& client, const Envelope& message) {
  CHARYBDIS_ASSERT(message.has_client_response());
  const ClientResponse& response = message.client_response();
  if (!client.in_flight || response.request_id() != client.request_id) return;  // stale
  client.answered_by = Address{message.from_node(), message.from_shard()};
  CHARYBDIS_ASSERT(ClientResponse::Code_IsValid(response.code()));
  Complete(client, KvOutcome(response.code()), &response);
}

void KvWorkload::OnTimeout(Client& client, uint64_t request_id) {
  if (!client.in_flight || client.request_id != request_id) return;
  client.avoid_until[client.coordinator.node] = simulator_.now() + kAvoidAfterTimeout;
  errors_["CLIENT_TIMEOUT"]++;
  Complete(client, client.op.function == HistoryOp::Function::kRead ? HistoryOp::Type::kFail
                                                                   : HistoryOp::Type::kInfo,
           nullptr);
}

void KvWorkload::Complete(Client& client, HistoryOp::Type type, const ClientResponse* response) {
  client.in_flight = false;
  simulator_.Cancel(client.timeout);
  const Operation& op = client.op;
  HistoryOp completion = KvHistoryEvent(op, client.process, type, table_);
  completion.time = simulator_.now();
  completion.datacenter = datacenter_;
  completion.client_timestamp = spec_.client_timestamp_granularity_us() > 0 && !op.lwt &&
                                op.function != HistoryOp::Function::kRead;
  if (response != nullptr) {
    completion.coordinator_node = client.answered_by.node;
    completion.coordinator_shard = client.answered_by.shard;
    completion.coordinator_life = response->coordinator_life();
  }
  const bool read = op.function == HistoryOp::Function::kRead;
  if (type == HistoryOp::Type::kOk) {
    ok_++;
    const int64_t latency_us = (simulator_.now() - client.started) / kMicrosecond;
    ReadKvAnswer(spec_, column_, op, *response, completion, client.memory);
    if (client.client_timestamp_us > 0 && completion.timestamp != client.client_timestamp_us) {
      client_timestamps_changed_++;
    }
    (read ? latencies_[op.consistency].read_us : latencies_[op.consistency].write_us).push_back(latency_us);
    if (read && (op.lwt || IsSerial(op.consistency))) {
      serial_read_round_trips_.push_back(response->round_trips());
    }
    if (op.function == HistoryOp::Function::kCas) {
      cas_attempts_++;
      cas_round_trips_.push_back(response->round_trips());
      response->applied() ? cas_applied_++ : cas_not_applied_++;
    }
  } else {
    cas_attempts_ += op.function == HistoryOp::Function::kCas;
    type == HistoryOp::Type::kFail ? failed_++ : indeterminate_++;
    if (response != nullptr) errors_[CodeName(response->code())]++;
    if (response != nullptr && response->code() == ClientResponse::UNAVAILABLE) unavailable_++;
    slowest_failure_us_ =
        std::max(slowest_failure_us_, (simulator_.now() - client.started) / kMicrosecond);
  }
  history_.push_back(std::move(completion));
  // Jepsen's rule: after an unknown outcome the process may still be
  // acting, so the client carries on as a new process.
  if (type == HistoryOp::Type::kInfo) client.process = next_process_++;
  if (spec_.read_after_write() && !read) {
    Operation next;
    next.key = op.key;
    next.consistency = op.consistency;
    if (!ValidForRead(op.consistency).ok()) {
      next.consistency = static_cast<ConsistencyLevel>(spec_.read_consistency(0));
    }
    client.read_next = next;
  }
  last_completion_ = simulator_.now();
  if (spec_.lock_step_cas()) {
    ArriveAtBarrier(client);
  } else {
    ScheduleNext(client);
  }
}

nlohmann::json KvWorkload::Results() const {
  nlohmann::json by_cl = nlohmann::json::object();
  for (const auto& [level, latencies] : latencies_) {
    nlohmann::json entry;
    entry["write"] = {{"count", latencies.write_us.size()},
                      {"p50_us", Percentile(latencies.write_us, 50)},
                      {"p99_us", Percentile(latencies.write_us, 99)}};
    entry["read"] = {{"count", latencies.read_us.size()},
                     {"p50_us", Percentile(latencies.read_us, 50)},
                     {"p99_us", Percentile(latencies.read_us, 99)}};
    by_cl[ConsistencyName(level)] = entry;
  }
  nlohmann::json results{{"name", name_},   {"kind", "kv"},        {"done", done()},
                         {"ok", ok_},       {"fail", failed_},     {"info", indeterminate_},
                         {"errors", errors_}, {"by_cl", by_cl}};
  if (!cas_round_trips_.empty() || !serial_read_round_trips_.empty()) {
    const double seconds =
        static_cast<double>(std::max<Nanos>(last_completion_ - first_start_, 1)) / kSecond;
    results["cas"] = {{"attempts", cas_attempts_},
                      {"applied", cas_applied_},
                      {"not_applied", cas_not_applied_},
                      {"goodput_per_s", static_cast<double>(cas_applied_) / seconds}};
    results["round_trips"] = {
        {"cas", {{"p50", Percentile(cas_round_trips_, 50)}, {"p99", Percentile(cas_round_trips_, 99)}}},
        {"serial_read",
         {{"p50", Percentile(serial_read_round_trips_, 50)},
          {"p99", Percentile(serial_read_round_trips_, 99)}}}};
  }
  return results;
}

std::vector<CheckResult> KvWorkload::Checks() const {
  auto invalid = errors_.find("INVALID_REQUEST");
  const uint64_t count = invalid == errors_.end() ? 0 : invalid->second;
  std::vector<CheckResult> checks = {CheckResult{absl::StrCat(name_, ".requests_valid"), count == 0,
                                                 absl::StrCat(count, " requests rejected as invalid")}};
  if (spec_.client_timestamp_granularity_us() > 0) {
    // USING TIMESTAMP is a promise too: the write is stored at that time.
    checks.push_back(CheckResult{absl::StrCat(name_, ".client_timestamps_kept"),
                                 client_timestamps_changed_ == 0,
                                 absl::StrCat(client_timestamps_changed_,
                                              " writes acknowledged at another timestamp than their own")});
  }
  if (!spec_.has_expect()) return checks;
  const auto& expect = spec_.expect();
  const uint64_t total = ok_ + failed_ + indeterminate_;
  const double ok_fraction = total == 0 ? 0 : static_cast<double>(ok_) / static_cast<double>(total);
  const double unavailable_fraction =
      total == 0 ? 0 : static_cast<double>(unavailable_) / static_cast<double>(total);
  bool passed = total > 0 && ok_fraction >= expect.min_ok_fraction() &&
                unavailable_fraction >= expect.min_unavailable_fraction();
  if (expect.max_failure_latency_us() > 0 && failed_ + indeterminate_ > 0) {
    passed = passed && slowest_failure_us_ <= static_cast<int64_t>(expect.max_failure_latency_us());
  }
  if (expect.cas_applied() > 0) {
    const double not_applied = cas_attempts_ == 0 ? 0
                                   : static_cast<double>(cas_attempts_ - cas_applied_) /
                                         static_cast<double>(cas_attempts_);
    passed = passed && cas_applied_ == expect.cas_applied() &&
             std::abs(not_applied - expect.cas_not_applied_fraction()) < 1e-9;
  }
  checks.push_back(CheckResult{
      absl::StrCat(name_, ".expect"), passed,
      absl::StrCat(total, " operations: ", ok_, " ok (", ok_fraction * 100, "%), ", unavailable_,
                   " unavailable (", unavailable_fraction * 100, "%), slowest failure ",
                   slowest_failure_us_, "us; ", cas_applied_, " of ", cas_attempts_,
                   " conditional writes applied")});
  return checks;
}

}  // namespace charybdis::sim
