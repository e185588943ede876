#include "node/server/shard_links.h"

#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "core/env/time.h"
#include "node/server/internode_frame.h"
#include "node/server/log.h"

namespace charybdis::node {

namespace {

constexpr auto kReconnectBackOff = std::chrono::milliseconds(100);
// A connect (and its TLS handshake) not done by then is given up (a peer
// host that drops packets would otherwise hold it for two minutes of SYN
// retries).
constexpr Nanos kConnectTimeout = 1 * kSecond;
// A connection whose peer has not taken this much output breaks: a paused
// peer costs bounded memory, and gets fresh messages, not stale ones,
// once it is back.
constexpr size_t kMaxOutputBytes = size_t{16} << 20;
constexpr size_t kReadChunkBytes = size_t{256} << 10;
// Reads per event: a peer sending without pause must not starve the rest.
constexpr int kMaxReadsPerEvent = 4;
// Data unacknowledged this long breaks the connection: a peer host that
// vanished without a word is noticed (as gRPC's keepalive did), not
// written to for the kernel's 15 minutes of retries.
constexpr unsigned kUnacknowledgedTimeoutMs = 5000;

void SetOutboundOptions(int fd) {
  const int on = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
  setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &kUnacknowledgedTimeoutMs, sizeof(kUnacknowledgedTimeoutMs));
}

}  // namespace

ShardLinks::ShardLinks(ShardThread& thread, Address self, std::map<NodeId, sockaddr_in> peers,
                       std::shared_ptr<TlsContext> tls, Deliver deliver)
    : thread_(thread), self_(self), tls_(std::move(tls)), peers_(std::move(peers)), deliver_(std::move(deliver)) {}

ShardLinks::~ShardLinks() {
  for (auto& [to, link] : outbound_) {
    if (link.fd >= 0) close(link.fd);
  }
  for (auto& [fd, link] : inbound_) close(fd);
}

void ShardLinks::AddPeer(NodeId node, const sockaddr_in& address) {
  CHARYBDIS_ASSERT(thread_.IsCurrent());
  CHARYBDIS_ASSERT(node != self_.node);
  peers_.try_emplace(node, address);  // an id's address never changes
}

void ShardLinks::Send(const Address& to, const Envelope& message) {
  CHARYBDIS_ASSERT(thread_.IsCurrent());
  CHARYBDIS_ASSERT(to.node != self_.node);
  // Not a node whose address this shard learned: lost, as on a network
  // that cannot route it.
  if (!peers_.count(to.node)) return;
  Outbound& link = outbound_[to];
  if (link.fd < 0) {
    if (SteadyClock::now() - link.broke_at < kReconnectBackOff) return;  // the peer was unreachable a moment ago
    if (!Connect(to, link)) return;
  }
  if (link.output.size() - link.written > kMaxOutputBytes) {
    Log("warn", "internode peer not reading: connection dropped", {{"to", to.ToString()}});
    return Break(link);
  }
  if (!AppendFrame(message, link.output)) {
    Log("error", "internode message too large: dropped", {{"to", to.ToString()}});
    return;
  }
  counts_.messages_sent++;
  if (!link.queued) {
    link.queued = true;
    flush_queue_.push_back(&link);
  }
}

bool ShardLinks::Connect(const Address& to, Outbound& link) {
  auto peer = peers_.find(to.node);
  CHARYBDIS_ASSERT(peer != peers_.end());
  link.broke_at = SteadyClock::now();  // what a failure below leaves
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  SetOutboundOptions(fd);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&peer->second), sizeof(sockaddr_in)) != 0 &&
      errno != EINPROGRESS) {
    close(fd);
    return false;
  }
  link.fd = fd;
  link.stream = tls_ == nullptr ? std::make_unique<SocketStream>(fd)
                                : std::make_unique<SocketStream>(fd, tls_->Current(), TlsSide::kClient);
  link.connected = false;
  link.watching_output = true;  // EPOLLOUT says the connect finished
  link.output = EncodeHello(InternodeHello{self_.node, to.node, to.shard});
  link.written = 0;
  link.watch = thread_.Watch(fd, EPOLLIN | EPOLLOUT, [this, to](uint32_t events) { OnOutboundEvent(to, events); });
  link.connect_timer = thread_.After(kConnectTimeout, [this, to] {
    Outbound& pending = outbound_.at(to);
    pending.connect_timer = 0;
    if (!pending.connected || pending.stream->handshaking()) Break(pending);
  });
  return true;
}

void ShardLinks::OnOutboundEvent(const Address& to, uint32_t events) {
  Outbound& link = outbound_.at(to);
  if (events & (EPOLLERR | EPOLLHUP)) return Break(link);
  if ((events & EPOLLOUT) && !link.connected) {
    int error = 0;
    socklen_t length = sizeof(error);
    if (getsockopt(link.fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) return Break(link);
    link.connected = true;
    // Through TLS the timer waits for the handshake too.
    if (!link.stream->tls()) {
      thread_.Cancel(link.connect_timer);
      link.connect_timer = 0;
    }
  }
  if (events & EPOLLIN) {
    // Peers never write on this connection: bytes or its end mean it is
    // over. (TLS reads its handshake answers here, and tells none.)
    char byte;
    if (link.stream->Read(&byte, 1) != 0) return Break(link);
  }
  // A handshake the read moved on may let the output go.
  if (events & (EPOLLOUT | EPOLLIN)) WriteOutput(link);
}

void ShardLinks::WriteOutput(Outbound& link) {
  if (!link.connected) return;  // the connect's EPOLLOUT writes it
  while (link.written < link.output.size()) {
    const ssize_t sent = link.stream->Write(link.output.data() + link.written, link.output.size() - link.written);
    if (sent < 0) return Break(link);
    if (sent == 0) break;
    counts_.socket_writes++;
    link.written += static_cast<size_t>(sent);
  }
  if (link.written == link.output.size()) {
    link.output.clear();
    link.written = 0;
  } else if (link.written > link.output.size() / 2) {
    link.output.erase(0, link.written);
    link.written = 0;
  }
  if (link.connect_timer != 0 && link.stream->tls() && !link.stream->handshaking()) {
    thread_.Cancel(link.connect_timer);
    link.connect_timer = 0;
  }
  UpdateOutputWatch(link);
}

void ShardLinks::UpdateOutputWatch(Outbound& link) {
  const bool waits_for_peer = link.stream->wants_readable() && !link.stream->wants_writable();
  const bool want_output = (!link.output.empty() && !waits_for_peer) || link.stream->wants_writable();
  if (want_output != link.watching_output) {
    link.watching_output = want_output;
    thread_.Rewatch(link.watch, EPOLLIN | (want_output ? EPOLLOUT : 0u));
  }
}

void ShardLinks::Break(Outbound& link) {
  const std::string failure = link.stream == nullptr ? "" : link.stream->failure();
  if (failure.rfind("TLS", 0) == 0 && failure != link.last_failure) {
    Log("warn", "internode connection failed", {{"shard", self_.ToString()}, {"why", failure}});
  }
  link.last_failure = failure;
  link.stream.reset();
  thread_.Unwatch(link.watch);
  thread_.Cancel(link.connect_timer);
  close(link.fd);
  link.fd = -1;
  link.watch = 0;
  link.connect_timer = 0;
  link.connected = false;
  link.watching_output = false;
  std::string().swap(link.output);  // what was queued is lost
  link.written = 0;
  link.broke_at = SteadyClock::now();
}

void ShardLinks::Flush() {
  for (Outbound* link : flush_queue_) {
    link->queued = false;
    // A full socket (EPOLLOUT on) is written when it has room again.
    if (link->fd >= 0 && !link->watching_output) WriteOutput(*link);
  }
  flush_queue_.clear();
}

void ShardLinks::Adopt(int fd, std::shared_ptr<SocketStream> stream) {
  CHARYBDIS_ASSERT(thread_.IsCurrent());
  CHARYBDIS_ASSERT(inbound_.count(fd) == 0);
  Inbound& link = inbound_[fd];
  link.stream = std::move(stream);
  link.watch = thread_.Watch(fd, EPOLLIN, [this, fd](uint32_t events) { OnInboundEvent(fd, events); });
  // The listener read the hello through TLS, maybe messages with it.
  if (link.stream->buffered()) OnInboundEvent(fd, 0);
}

void ShardLinks::OnInboundEvent(int fd, uint32_t events) {
  Inbound& link = inbound_.at(fd);
  bool ended = (events & EPOLLERR) != 0;
  static thread_local std::string chunk(kReadChunkBytes, '\0');
  for (int reads = 0; reads < kMaxReadsPerEvent && !ended; reads++) {
    const ssize_t got = link.stream->Read(chunk.data(), chunk.size());
    if (got > 0) link.input.append(chunk.data(), static_cast<size_t>(got));
    ended = got < 0;
    if (got < static_cast<ssize_t>(chunk.size())) break;  // nothing more for now
  }
  // TLS may owe the peer an answer (a key update) the socket did not take.
  if (!ended && link.stream->wants_writable() != link.watching_output) {
    link.watching_output = link.stream->wants_writable();
    thread_.Rewatch(link.watch, EPOLLIN | (link.watching_output ? EPOLLOUT : 0u));
  }
  // Messages that arrived before the end still count.
  const absl::Status taken = TakeFrames(link.input, deliver_);
  if (!taken.ok()) {
    Log("warn", "internode connection closed", {{"shard", self_.ToString()}, {"error", std::string(taken.message())}});
  }
  if (ended || !taken.ok()) return CloseInbound(fd);
  // What TLS holds decrypted is read on the next turn: epoll will not tell.
  if (link.stream->buffered()) {
    thread_.Post([this, fd] {
      if (inbound_.count(fd)) OnInboundEvent(fd, 0);
    });
  }
}

void ShardLinks::CloseInbound(int fd) {
  auto it = inbound_.find(fd);
  CHARYBDIS_ASSERT(it != inbound_.end());
  thread_.Unwatch(it->second.watch);
  close(fd);
  inbound_.erase(it);
}

}  // namespace charybdis::node
