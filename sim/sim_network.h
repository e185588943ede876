#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "core/env/network.h"
#include "core/env/random.h"
#include "proto/scenario.pb.h"
#include "sim/simulator.h"

namespace charybdis::sim {

// Per-message fault probabilities in force (the scenario's baseline, raised
// by random faults while they last).
struct MessageFaults {
  double loss = 0;
  double duplicate = 0;
  double reorder = 0;
};

struct NetworkStats {
  uint64_t sent = 0;
  uint64_t delivered = 0;
  uint64_t lost = 0;          // to loss or a partition
  uint64_t duplicated = 0;
  uint64_t undeliverable = 0; // the target was down
};

// The simulated network between hosts (nodes and clients). Host h carries
// node id h + 1. Latency depends on the datacenter pair. Each link from
// one shard to another delivers in the order it was sent, as the runtime's
// streams and shard queues do; only the `reorder` fault (a message held
// back, overtaken by later ones) and the second copy of a duplicate break
// that order. Messages can be lost, duplicated, reordered, blocked by
// partitions (symmetric or one way) and held back by clogs.
class SimNetwork {
 public:
  // `latency[from_dc][to_dc]`.
  SimNetwork(Simulator& simulator, Random random,
             std::vector<std::vector<scenario::Latency>> latency,
             scenario::Latency intra_node, bool wire_roundtrip);

  // REQUIRES: hosts are added in simulator host order.
  void AddHost(uint32_t datacenter, uint32_t shards);
  void SetReceiver(const Address& address, Network::Receiver receiver);
  // Forgets every receiver of the host (it crashed).
  void ClearReceivers(uint32_t host);

  void Send(Address from, Address to, Envelope message);

  void Block(uint32_t from_host, uint32_t to_host);
  void HealPartitions();
  void Clog(uint32_t host, Nanos until);
  void Unclog();
  void set_faults(MessageFaults faults) { faults_ = faults; }
  const MessageFaults& faults() const { return faults_; }
  // Scripted tests: a tap sees every message sent and may decide its fate,
  // returning the extra delay of each copy to deliver (none: lost), or
  // nullopt to let the network's own faults decide. A copy with no extra
  // delay keeps the link's order; one held back may be overtaken.
  using Tap = std::function<std::optional<std::vector<Nanos>>(const Envelope&)>;
  void set_tap(Tap tap) { tap_ = std::move(tap); }
  const NetworkStats& stats() const { return stats_; }

  static uint32_t HostOf(NodeId node) { return node - 1; }
  static NodeId NodeOf(uint32_t host) { return host + 1; }

 private:
  struct Host {
    uint32_t datacenter = 0;
    std::vector<Network::Receiver> receivers;  // by shard
    Nanos clogged_until = 0;
  };

  // When a message sent now on the link arrives; `in_order`: not before
  // the link's messages sent before it.
  Nanos DeliveryTime(Address from, Address to, bool in_order);
  void Deliver(Nanos at, Envelope message);
  bool blocked(uint32_t from_host, uint32_t to_host) const;

  Simulator& simulator_;
  Random random_;
  std::vector<std::vector<scenario::Latency>> latency_;
  scenario::Latency intra_node_;
  bool wire_roundtrip_;
  MessageFaults faults_;
  Tap tap_;
  NetworkStats stats_;
  std::vector<Host> hosts_;
  std::vector<std::vector<bool>> blocked_;  // [from][to], grown with hosts
  // The latest in-order delivery on each link (from, to).
  std::map<std::pair<Address, Address>, Nanos> link_delivered_at_;
};

// The core/ Network of one shard, sending from its address. `sent` (may
// be empty) hears of every message once it is on its way.
class ShardNetwork final : public Network {
 public:
  using Sent = std::function<void(Envelope::BodyCase)>;
  ShardNetwork(SimNetwork& network, Address self, Sent sent = nullptr)
      : network_(network), self_(self), sent_(std::move(sent)) {}
  void Send(const Address& to, Envelope message) override {
    const Envelope::BodyCase body = message.body_case();
    network_.Send(self_, to, std::move(message));
    if (sent_) sent_(body);
  }
  void SetReceiver(Receiver receiver) override {
    network_.SetReceiver(self_, std::move(receiver));
  }

 private:
  SimNetwork& network_;
  Address self_;
  Sent sent_;
};

}  // namespace charybdis::sim
