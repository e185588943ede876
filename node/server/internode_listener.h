#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "core/env/address.h"

namespace charybdis::node {

// Accepts the internode connections peers open to this node. Its thread
// reads each connection's hello (many at once: a silent one holds up no
// other) and hands the socket to the shard the hello names, whose thread
// reads it from then on. Connections with a bad hello (another protocol,
// another node's address, a shard we lack), or none within 2 s, are
// closed.
class InternodeListener {
 public:
  // Takes the socket (non-blocking) for `shard`.
  using Handoff = std::function<void(ShardId shard, int fd)>;

  // FailedPrecondition when `address` cannot be listened on.
  static absl::StatusOr<std::unique_ptr<InternodeListener>> Start(const std::string& address, NodeId self,
                                                                 ShardId shards, Handoff handoff);
  // Stops accepting (connections already handed over stay open).
  ~InternodeListener();
  InternodeListener(const InternodeListener&) = delete;
  InternodeListener& operator=(const InternodeListener&) = delete;

 private:
  using SteadyClock = std::chrono::steady_clock;
  // An accepted connection whose hello is not all here yet.
  struct Pending {
    int fd;
    std::string hello;
    SteadyClock::time_point deadline;
  };

  InternodeListener(int listener, int wakeup, NodeId self, ShardId shards, Handoff handoff);
  void Loop();
  void AcceptAll();
  // Reads what `pending` sent; true once it is done with (handed over or
  // closed).
  bool ReadHello(Pending& pending);
  // Closes the connections whose hello is late; keeps the rest.
  void DropLate();

  const int listener_;
  const int wakeup_;  // an eventfd: the destructor wakes the thread with it
  const NodeId self_;
  const ShardId shards_;
  const Handoff handoff_;
  std::vector<Pending> pending_;  // the thread's only
  std::thread thread_;
};

}  // namespace charybdis::node
