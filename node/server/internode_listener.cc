#include "node/server/internode_listener.h"

#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "node/server/internode_frame.h"
#include "node/server/log.h"
#include "node/server/socket_address.h"

namespace charybdis::node {

namespace {

// A peer's hello comes with its connect; a connection silent this long is
// not a peer of ours.
constexpr auto kHelloTimeout = std::chrono::seconds(2);
// Connections awaiting their hello; beyond this, new ones are refused.
constexpr size_t kMaxPending = 1024;
// Inbound connections carry nothing back, so only keepalive probes notice
// a peer host gone without a word (~8 s), and free the socket.
constexpr int kKeepAliveIdleS = 5;
constexpr int kKeepAliveIntervalS = 1;
constexpr int kKeepAliveProbes = 3;

absl::Status CannotListen(const std::string& address, const std::string& why) {
  return absl::FailedPreconditionError(absl::StrCat("internode_address: cannot listen on ", address, " (", why, ")"));
}

void SetInboundOptions(int fd) {
  const int on = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &kKeepAliveIdleS, sizeof(kKeepAliveIdleS));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &kKeepAliveIntervalS, sizeof(kKeepAliveIntervalS));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &kKeepAliveProbes, sizeof(kKeepAliveProbes));
}

}  // namespace

absl::StatusOr<std::unique_ptr<InternodeListener>> InternodeListener::Start(const std::string& address,
                                                                           NodeId self, ShardId shards,
                                                                           std::shared_ptr<TlsContext> tls,
                                                                           Handoff handoff) {
  auto resolved = ResolveIpv4HostPort(address);
  if (!resolved.ok()) return CannotListen(address, std::string(resolved.status().message()));
  const int fd = ListenTcp(*resolved, SOMAXCONN);
  if (fd < 0) return CannotListen(address, errno == EADDRINUSE ? "port in use?" : strerror(errno));
  const int wakeup = eventfd(0, EFD_CLOEXEC);
  if (wakeup < 0) {
    close(fd);
    return CannotListen(address, strerror(errno));
  }
  return std::unique_ptr<InternodeListener>(
      new InternodeListener(fd, wakeup, self, shards, std::move(tls), std::move(handoff)));
}

InternodeListener::InternodeListener(int listener, int wakeup, NodeId self, ShardId shards,
                                     std::shared_ptr<TlsContext> tls, Handoff handoff)
    : listener_(listener), wakeup_(wakeup), self_(self), shards_(shards), tls_(std::move(tls)),
      handoff_(std::move(handoff)) {
  thread_ = std::thread([this] { Loop(); });
}

InternodeListener::~InternodeListener() {
  const uint64_t one = 1;
  (void)!write(wakeup_, &one, sizeof(one));
  thread_.join();
  for (const Pending& pending : pending_) close(pending.fd);
  close(listener_);
  close(wakeup_);
}

void InternodeListener::Loop() {
  std::vector<pollfd> watched;
  while (true) {
    watched.assign({{listener_, POLLIN, 0}, {wakeup_, POLLIN, 0}});
    for (const Pending& pending : pending_) {
      const short events = POLLIN | (pending.stream->wants_writable() ? POLLOUT : 0);
      watched.push_back({pending.fd, events, 0});
    }
    int timeout_ms = -1;
    for (const Pending& pending : pending_) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(pending.deadline - SteadyClock::now());
      timeout_ms = std::max<int>(0, timeout_ms < 0 ? left.count() : std::min<int>(timeout_ms, left.count()));
    }
    if (poll(watched.data(), watched.size(), timeout_ms) < 0) {
      if (errno == EINTR) continue;
      Log("error", "internode listener stopped", {{"error", strerror(errno)}});
      return;
    }
    if (watched[1].revents != 0) return;
    // The pending ones' pollfds follow the first two, in order.
    std::vector<Pending> waiting;
    for (size_t i = 0; i < pending_.size(); i++) {
      if (watched[i + 2].revents != 0 && ReadHello(pending_[i])) continue;
      waiting.push_back(std::move(pending_[i]));
    }
    pending_.swap(waiting);
    DropLate();
    if (watched[0].revents != 0) AcceptAll();
  }
}

void InternodeListener::AcceptAll() {
  while (true) {
    const int fd = accept4(listener_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      // Out of descriptors: the peers retry after their back-off; a pause
      // keeps this thread from spinning on a listener that stays ready.
      if (errno == EMFILE || errno == ENFILE) usleep(100000);
      return;
    }
    if (pending_.size() >= kMaxPending) {
      close(fd);
      continue;
    }
    auto stream = tls_ == nullptr ? std::make_shared<SocketStream>(fd)
                                  : std::make_shared<SocketStream>(fd, tls_->Current(), TlsSide::kServer);
    pending_.push_back(Pending{fd, std::move(stream), "", SteadyClock::now() + kHelloTimeout});
  }
}

bool InternodeListener::ReadHello(Pending& pending) {
  char bytes[kInternodeHelloBytes];
  const ssize_t got = pending.stream->Read(bytes, kInternodeHelloBytes - pending.hello.size());
  if (got == 0) return false;
  if (got > 0) pending.hello.append(bytes, static_cast<size_t>(got));
  if (got > 0 && pending.hello.size() < kInternodeHelloBytes) return false;
  const auto hello = got < 0 ? std::nullopt : DecodeHello(pending.hello);
  if (!hello || hello->to_node != self_ || hello->to_shard >= shards_) {
    LogRefusal(got < 0                ? pending.stream->failure()
               : !hello               ? "no hello of this protocol"
                                      : "its hello names another node or shard");
    close(pending.fd);
    return true;
  }
  SetInboundOptions(pending.fd);
  handoff_(hello->to_shard, pending.fd, std::move(pending.stream));
  return true;
}

void InternodeListener::LogRefusal(const std::string& why) {
  const auto now = SteadyClock::now();
  if (now - refusal_logged_at_ < std::chrono::seconds(1)) {
    refusals_unlogged_++;
    return;
  }
  Log("warn", "internode connection refused", {{"why", why}, {"also_refused_since_last", absl::StrCat(refusals_unlogged_)}});
  refusal_logged_at_ = now;
  refusals_unlogged_ = 0;
}

void InternodeListener::DropLate() {
  const auto now = SteadyClock::now();
  std::vector<Pending> waiting;
  for (Pending& pending : pending_) {
    if (now < pending.deadline) {
      waiting.push_back(std::move(pending));
      continue;
    }
    LogRefusal(pending.stream->handshaking() ? "no TLS handshake within 2 s" : "no hello within 2 s");
    close(pending.fd);
  }
  pending_.swap(waiting);
}

}  // namespace charybdis::node
