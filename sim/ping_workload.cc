#include "sim/ping_workload.h"

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "core/telemetry/percentile.h"

namespace charybdis::sim {

struct PingWorkload::Client {
  NodeId id = 0;
  uint32_t host = 0;
  uint32_t remaining = 0;
  uint64_t next_request_id = 0;
  uint64_t outstanding = 0;  // request id awaiting an answer, 0 if none
  std::string payload;
  Nanos sent_at = 0;
};

PingWorkload::PingWorkload(Simulator& simulator, Cluster& cluster, std::string name,
                           const scenario::PingWorkload& spec, Random random)
    : simulator_(simulator), cluster_(cluster), name_(std::move(name)), spec_(spec), random_(random) {
  const int datacenter =
      spec.datacenter().empty() ? 0 : cluster.topology().DatacenterIndex(spec.datacenter());
  CHARYBDIS_ASSERT(datacenter >= 0);
  for (uint32_t i = 0; i < spec.clients(); i++) {
    auto client = std::make_unique<Client>();
    client->id = cluster.AddClient(static_cast<uint32_t>(datacenter));
    client->host = SimNetwork::HostOf(client->id);
    client->remaining = spec.requests_per_client();
    Client* raw = client.get();
    cluster.network().SetReceiver(Address{client->id, 0},
                                  [this, raw](const Envelope& message) { OnReply(*raw, message); });
    clients_.push_back(std::move(client));
  }
}

PingWorkload::~PingWorkload() {
  for (auto& client : clients_) cluster_.network().ClearReceivers(client->host);
}

void PingWorkload::Start() {
  const Nanos start = static_cast<Nanos>(spec_.start_ms()) * kMillisecond;
  for (auto& client : clients_) {
    Client* raw = client.get();
    simulator_.Schedule(start, EventTag{EventKind::kClient, raw->host, 0, 0}, true,
                        [this, raw] { SendNext(*raw); });
  }
}

void PingWorkload::SendNext(Client& client) {
  if (client.remaining == 0) {
    Finish(client);
    return;
  }
  client.remaining--;
  requests_++;
  const uint64_t request_id = ++client.next_request_id;
  client.outstanding = request_id;
  client.payload.resize(spec_.payload_bytes());
  for (char& byte : client.payload) byte = static_cast<char>(random_.Next());
  client.sent_at = simulator_.now();

  const NodeId target = static_cast<NodeId>(1 + random_.Below(cluster_.size()));
  const ShardId shard = static_cast<ShardId>(random_.Below(cluster_.topology().shards_per_node));
  Envelope message;
  message.mutable_ping()->set_request_id(request_id);
  message.mutable_ping()->set_payload(client.payload);
  cluster_.network().Send(Address{client.id, 0}, Address{target, shard}, std::move(message));

  Client* raw = &client;
  simulator_.Schedule(simulator_.now() + static_cast<Nanos>(spec_.timeout_ms()) * kMillisecond,
                      EventTag{EventKind::kClient, client.host, 0, request_id}, true,
                      [this, raw, request_id] { OnTimeout(*raw, request_id); });
}

void PingWorkload::OnReply(Client& client, const Envelope& message) {
  CHARYBDIS_ASSERT(message.has_pong());
  if (message.pong().request_id() != client.outstanding) {
    stale_replies_++;  // late (after its timeout) or duplicated
    return;
  }
  if (message.pong().payload() != client.payload) corrupted_replies_++;
  answered_++;
  latencies_us_.push_back((simulator_.now() - client.sent_at) / kMicrosecond);
  client.outstanding = 0;
  Client* raw = &client;
  simulator_.Schedule(simulator_.now() + static_cast<Nanos>(spec_.think_time_ms()) * kMillisecond,
                      EventTag{EventKind::kClient, client.host, 0, 0}, true,
                      [this, raw] { SendNext(*raw); });
}

void PingWorkload::OnTimeout(Client& client, uint64_t request_id) {
  if (client.outstanding != request_id) return;  // answered in time
  timeouts_++;
  client.outstanding = 0;
  SendNext(client);
}

void PingWorkload::Finish(Client& client) {
  CHARYBDIS_ASSERT(client.outstanding == 0);
  clients_done_++;
  CHARYBDIS_ASSERT(clients_done_ <= clients_.size());
}

nlohmann::json PingWorkload::Results() const {
  return nlohmann::json{
      {"name", name_},
      {"kind", "ping"},
      {"done", done()},
      {"requests", requests_},
      {"answered", answered_},
      {"timeouts", timeouts_},
      {"stale_replies", stale_replies_},
      {"corrupted_replies", corrupted_replies_},
      {"latency_us", {{"p50", Percentile(latencies_us_, 50)}, {"p99", Percentile(latencies_us_, 99)}}},
  };
}

std::vector<CheckResult> PingWorkload::Checks() const {
  CheckResult intact{absl::StrCat(name_, ".replies_intact"), corrupted_replies_ == 0, ""};
  if (!intact.passed) {
    intact.detail = absl::StrCat(corrupted_replies_, " answers did not carry their request's payload");
  }
  // Each request ends exactly once: answered or timed out.
  CheckResult accounted{absl::StrCat(name_, ".requests_accounted"),
                        !done() || answered_ + timeouts_ == requests_,
                        absl::StrCat(requests_, " sent, ", answered_, " answered, ", timeouts_,
                                     " timed out")};
  return {intact, accounted};
}

}  // namespace charybdis::sim
