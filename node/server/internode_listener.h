#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "core/env/address.h"
#include "node/tls/socket_stream.h"

namespace charybdis::node {

// Accepts the internode connections peers open to this node. Its thread
// runs each connection's TLS handshake (with internode TLS on) and reads
// its hello, many at once: a silent one holds up no other. It hands the
// socket to the shard the hello names, whose thread reads it from then
// on. Connections with a refused handshake (no certificate the cluster's
// CA signed), a bad hello (another protocol, another node's address, a
// shard we lack), or none within 2 s, are closed.
class InternodeListener {
 public:
  // Takes the socket (non-blocking) for `shard`, and the stream it is
  // read through.
  using Handoff = std::function<void(ShardId shard, int fd, std::shared_ptr<SocketStream> stream)>;

  // FailedPrecondition when `address` cannot be listened on. `tls`: the
  // context peers are accepted with (null: in clear).
  static absl::StatusOr<std::unique_ptr<InternodeListener>> Start(const std::string& address, NodeId self,
                                                                 ShardId shards, std::shared_ptr<TlsContext> tls,
                                                                 Handoff handoff);
  // Stops accepting (connections already handed over stay open).
  ~InternodeListener();
  InternodeListener(const InternodeListener&) = delete;
  InternodeListener& operator=(const InternodeListener&) = delete;

 private:
  using SteadyClock = std::chrono::steady_clock;
  // An accepted connection whose hello is not all here yet.
  struct Pending {
    int fd;
    std::shared_ptr<SocketStream> stream;
    std::string hello;
    SteadyClock::time_point deadline;
  };

  InternodeListener(int listener, int wakeup, NodeId self, ShardId shards, std::shared_ptr<TlsContext> tls,
                    Handoff handoff);
  void Loop();
  void AcceptAll();
  // Reads what `pending` sent; true once it is done with (handed over or
  // closed).
  bool ReadHello(Pending& pending);
  // Closes the connections whose hello is late; keeps the rest.
  void DropLate();
  // Logs why a connection was refused: at most once a second, with how
  // many were refused meanwhile (a peer with a bad certificate retries
  // ten times a second).
  void LogRefusal(const std::string& why);

  const int listener_;
  const int wakeup_;  // an eventfd: the destructor wakes the thread with it
  const NodeId self_;
  const ShardId shards_;
  const std::shared_ptr<TlsContext> tls_;
  const Handoff handoff_;
  SteadyClock::time_point refusal_logged_at_;
  uint64_t refusals_unlogged_ = 0;
  std::vector<Pending> pending_;  // the thread's only
  std::thread thread_;
};

}  // namespace charybdis::node
