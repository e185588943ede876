#pragma once

#include <functional>
#include <string>

#include "core/env/address.h"
#include "proto/messages.pb.h"

namespace charybdis {

// Fire-and-forget messages between shards of any node (the same path,
// with a smaller delay, between shards of one node). A message may be lost,
// delayed, duplicated or reordered; core/ code must cope with all four.
class Network {
 public:
  using Receiver = std::function<void(const Envelope&)>;

  virtual ~Network() = default;
  // Fills in the envelope's from and to fields and sends it.
  virtual void Send(const Address& to, Envelope message) = 0;
  // Inbound messages of this shard arrive here, on its reactor.
  virtual void SetReceiver(Receiver receiver) = 0;
  // Where `node` is reached from now on: a member the topology log holds,
  // or a new node whose heartbeat gave its address. A node's address never
  // changes. The simulator's ids are its addresses, so it ignores this.
  virtual void LearnAddress(NodeId node, const std::string& address) {
    (void)node;
    (void)address;
  }
};

}  // namespace charybdis
