#pragma once

#include <netinet/in.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/env/address.h"
#include "node/server/shard_thread.h"
#include "node/tls/socket_stream.h"
#include "proto/messages.pb.h"

namespace charybdis::node {

// One shard's internode connections, read and written on the shard's own
// thread (no thread in between; docs/node.md):
// - outbound: one TCP connection per peer shard this shard sends to,
//   opened on the first message. Messages sent during a turn of the
//   shard's loop are written together at its end, one write per
//   connection however many there are.
// - inbound: the connections peers opened to this shard (the listener
//   hands them over); their messages go straight to `deliver`.
// A message is fire-and-forget: one queued on a connection that then
// breaks, or sent during the short back-off after a connection broke, is
// lost (core/ copes). A connection whose peer does not take its output (a
// paused process) breaks once the output reaches a bound, so what it held
// is lost rather than delivered stale. The first message after the
// back-off connects again.
class ShardLinks {
 public:
  using Deliver = std::function<void(const Envelope&)>;

  // `peers`: the internode address of every other node known at start.
  // `tls`: the context peers are called with (null: in clear).
  ShardLinks(ShardThread& thread, Address self, std::map<NodeId, sockaddr_in> peers,
             std::shared_ptr<TlsContext> tls, Deliver deliver);
  ShardLinks(const ShardLinks&) = delete;
  ShardLinks& operator=(const ShardLinks&) = delete;
  // Closes every connection: only once the shard thread has stopped.
  ~ShardLinks();

  // Shard thread only. A message to a node whose address is not known is
  // dropped.
  void Send(const Address& to, const Envelope& message);
  // Where `node` is reached: a member that joined, or a new node that
  // heartbeats (Network::LearnAddress). Shard thread only.
  void AddPeer(NodeId node, const sockaddr_in& address);
  bool Knows(NodeId node) const { return peers_.count(node) > 0; }
  // Takes an inbound connection whose hello named this shard, read
  // through `stream`.
  void Adopt(int fd, std::shared_ptr<SocketStream> stream);
  // Writes what this turn queued (the thread's end of turn).
  void Flush();

  // Messages queued to peers and the socket writes that carried them:
  // coalescing at work (shard thread only).
  struct Counts {
    uint64_t messages_sent = 0;
    uint64_t socket_writes = 0;
  };
  Counts counts() const { return counts_; }

 private:
  using SteadyClock = std::chrono::steady_clock;
  struct Outbound {
    int fd = -1;
    std::unique_ptr<SocketStream> stream;
    ShardThread::WatchId watch = 0;
    TimerId connect_timer = 0;     // set while connecting
    bool connected = false;
    bool watching_output = false;  // EPOLLOUT is on: the socket is full
    bool queued = false;           // in flush_queue_
    // Bytes not yet written: output[written..]. The written head is cut
    // off only once it is half the buffer, so a slow reader does not cost
    // a copy of the whole backlog per write.
    std::string output;
    size_t written = 0;
    SteadyClock::time_point broke_at;
    std::string last_failure;  // logged when it changes, not at every retry
  };
  struct Inbound {
    ShardThread::WatchId watch = 0;
    std::shared_ptr<SocketStream> stream;
    bool watching_output = false;  // EPOLLOUT is on: TLS owes the peer bytes
    std::string input;
  };

  // Starts a non-blocking connect; false (and a back-off) if it failed.
  bool Connect(const Address& to, Outbound& link);
  void OnOutboundEvent(const Address& to, uint32_t events);
  void WriteOutput(Outbound& link);
  // EPOLLOUT while there is output the socket may take now (not while a
  // TLS handshake waits for the peer).
  void UpdateOutputWatch(Outbound& link);
  void Break(Outbound& link);
  void OnInboundEvent(int fd, uint32_t events);
  void CloseInbound(int fd);

  ShardThread& thread_;
  const Address self_;
  const std::shared_ptr<TlsContext> tls_;
  std::map<NodeId, sockaddr_in> peers_;  // grows as the log adds members
  const Deliver deliver_;
  std::map<Address, Outbound> outbound_;
  std::map<int, Inbound> inbound_;  // by fd
  std::vector<Outbound*> flush_queue_;
  Counts counts_;
};

}  // namespace charybdis::node
