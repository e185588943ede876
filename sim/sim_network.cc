#include "sim/sim_network.h"

#include <algorithm>

#include "core/env/assert.h"
#include "sim/latency.h"

namespace charybdis::sim {

SimNetwork::SimNetwork(Simulator& simulator, Random random,
                       std::vector<std::vector<scenario::Latency>> latency,
                       scenario::Latency intra_node, bool wire_roundtrip)
    : simulator_(simulator),
      random_(random),
      latency_(std::move(latency)),
      intra_node_(intra_node),
      wire_roundtrip_(wire_roundtrip) {}

void SimNetwork::AddHost(uint32_t datacenter, uint32_t shards) {
  CHARYBDIS_ASSERT(datacenter < latency_.size());
  CHARYBDIS_ASSERT(shards > 0);
  Host host;
  host.datacenter = datacenter;
  host.receivers.resize(shards);
  hosts_.push_back(std::move(host));
  for (auto& row : blocked_) row.push_back(false);
  blocked_.emplace_back(hosts_.size(), false);
}

void SimNetwork::SetReceiver(const Address& address, Network::Receiver receiver) {
  Host& host = hosts_.at(HostOf(address.node));
  CHARYBDIS_ASSERT(address.shard < host.receivers.size());
  host.receivers[address.shard] = std::move(receiver);
}

void SimNetwork::ClearReceivers(uint32_t host) {
  for (auto& receiver : hosts_.at(host).receivers) receiver = nullptr;
}

bool SimNetwork::blocked(uint32_t from_host, uint32_t to_host) const {
  return blocked_[from_host][to_host];
}

void SimNetwork::Block(uint32_t from_host, uint32_t to_host) {
  CHARYBDIS_ASSERT(from_host != to_host);
  blocked_.at(from_host).at(to_host) = true;
}

void SimNetwork::HealPartitions() {
  for (auto& row : blocked_) std::fill(row.begin(), row.end(), false);
}

void SimNetwork::Clog(uint32_t host, Nanos until) {
  Host& state = hosts_.at(host);
  state.clogged_until = std::max(state.clogged_until, until);
}

void SimNetwork::Unclog() {
  for (Host& host : hosts_) host.clogged_until = 0;
}

Nanos SimNetwork::DeliveryTime(Address from, Address to, bool in_order) {
  const uint32_t from_host = HostOf(from.node);
  const uint32_t to_host = HostOf(to.node);
  const scenario::Latency& link =
      from_host == to_host ? intra_node_ : latency_[hosts_[from_host].datacenter][hosts_[to_host].datacenter];
  Nanos delay = DrawLatency(link, random_);
  if (random_.Chance(faults_.reorder)) {
    // Held back long enough to be overtaken by later messages on the link.
    delay += static_cast<Nanos>(random_.Below(4 * static_cast<uint64_t>(delay) + kMicrosecond));
    in_order = false;
  }
  // A clogged host neither sends nor receives until the clog ends.
  const Nanos start = std::max({simulator_.now(), hosts_[from_host].clogged_until, hosts_[to_host].clogged_until});
  if (!in_order) return start + delay;
  // Same time, sent later: the simulator runs it later.
  Nanos& delivered_at = link_delivered_at_[{from, to}];
  delivered_at = std::max(delivered_at, start + delay);
  return delivered_at;
}

void SimNetwork::Send(Address from, Address to, Envelope message) {
  const uint32_t from_host = HostOf(from.node);
  const uint32_t to_host = HostOf(to.node);
  CHARYBDIS_ASSERT(from_host < hosts_.size());
  if (to_host >= hosts_.size()) {
    // A member no host runs (a newcomer that never started): as an
    // address nobody listens on, the message goes nowhere.
    stats_.sent++;
    stats_.lost++;
    return;
  }
  CHARYBDIS_ASSERT(to.shard < hosts_[to_host].receivers.size());
  message.set_from_node(from.node);
  message.set_from_shard(from.shard);
  message.set_to_node(to.node);
  message.set_to_shard(to.shard);
  stats_.sent++;
  if (tap_) {
    if (std::optional<std::vector<Nanos>> copies = tap_(message)) {
      if (copies->empty()) stats_.lost++;
      for (Nanos extra : *copies) Deliver(DeliveryTime(from, to, extra == 0) + extra, message);
      return;
    }
  }
  if (blocked(from_host, to_host) || (from_host != to_host && random_.Chance(faults_.loss))) {
    stats_.lost++;
    return;
  }
  const bool duplicate = from_host != to_host && random_.Chance(faults_.duplicate);
  if (duplicate) {
    stats_.duplicated++;
    Deliver(DeliveryTime(from, to, /*in_order=*/false), message);
  }
  Deliver(DeliveryTime(from, to, /*in_order=*/true), std::move(message));
}

void SimNetwork::Deliver(Nanos at, Envelope message) {
  const uint32_t to_host = HostOf(message.to_node());
  // A message between shards of one node never leaves the process: it dies
  // with it. One between hosts is on the wire and may outlive its sender.
  const bool bound = to_host == HostOf(message.from_node());
  const EventTag tag{EventKind::kDelivery, to_host, message.to_shard(),
                     static_cast<uint64_t>(message.body_case()) |
                         static_cast<uint64_t>(message.from_node()) << 16 |
                         static_cast<uint64_t>(message.from_shard()) << 48};
  auto receive = [this, to_host](const Envelope& envelope) {
    const Network::Receiver& receiver = hosts_[to_host].receivers[envelope.to_shard()];
    if (!receiver) {
      stats_.undeliverable++;
      return;
    }
    stats_.delivered++;
    receiver(envelope);
  };
  if (wire_roundtrip_) {
    std::string wire = message.SerializeAsString();
    simulator_.Schedule(at, tag, bound, [receive, wire = std::move(wire)] {
      Envelope parsed;
      CHARYBDIS_ASSERT(parsed.ParseFromString(wire));
      receive(parsed);
    });
  } else {
    simulator_.Schedule(at, tag, bound,
                        [receive, message = std::move(message)] { receive(message); });
  }
}

}  // namespace charybdis::sim
