#include "node/cql_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/token.h"
#include "node/log.h"
#include "node/node.h"

namespace charybdis::node {
namespace {

// "host:port" as an IPv4 socket address.
bool ParseAddress(const std::string& address, sockaddr_in& out) {
  const size_t colon = address.rfind(':');
  uint32_t port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port) || port > 65535) return false;
  std::string host = address.substr(0, colon);
  if (host == "localhost") host = "127.0.0.1";
  out = {};
  out.sin_family = AF_INET;
  out.sin_port = htons(static_cast<uint16_t>(port));
  return inet_pton(AF_INET, host.c_str(), &out.sin_addr) == 1;
}

cql::HostInfo Host(const Member& member, const TokenRing& ring) {
  cql::HostInfo host;
  host.host_id = cql::NameUuid(absl::StrCat("charybdis-node-", member.id()));
  host.datacenter = member.datacenter();
  host.rack = member.rack();
  for (const auto& vnode : ring.tokens()) {
    if (vnode.node == member.id()) host.tokens.push_back(absl::StrCat(vnode.token));
  }
  sockaddr_in address;
  if (ParseAddress(member.cql_address(), address)) {
    host.address.assign(reinterpret_cast<const char*>(&address.sin_addr), 4);
    host.native_port = ntohs(address.sin_port);
  } else {
    host.address = std::string("\x7f\x00\x00\x01", 4);
  }
  return host;
}

// The node's requests, each sent to the shard that owns its partition, so
// that it skips the hop between shards.
class NodeBackend final : public cql::Backend {
 public:
  explicit NodeBackend(Node& node) : node_(node) {
    const LoadedConfig& config = node.config();
    for (const Member& member : config.file.member()) {
      cql::HostInfo host = Host(member, *config.node.ring);
      if (member.id() == config.node.id) {
        cluster_.local = std::move(host);
      } else {
        cluster_.peers.push_back(std::move(host));
      }
    }
  }

  void Execute(ClientRequest request, std::function<void(ClientResponse)> done) override {
    const std::string& key = request.has_read()  ? request.read().partition_key()
                             : request.has_cas() ? request.cas().statement(0).write().partition_key()
                                                 : request.write().partition_key();
    ExecuteRequest execute;
    execute.set_has_shard(true);
    execute.set_shard(ShardOf(TokenOf(key), node_.config().node.shards));
    *execute.mutable_request() = std::move(request);
    node_.Execute(execute, std::move(done));
  }

  cql::ClusterView Cluster() override { return cluster_; }

 private:
  Node& node_;
  cql::ClusterView cluster_;
};

}  // namespace

// One connection: its socket, the bytes read but not yet framed, and the
// bytes to write that the socket did not take yet.
struct CqlServer::Client {
  int fd = -1;
  int wakeup = -1;
  std::string input;
  std::unique_ptr<cql::Connection> connection;
  std::mutex mutex;  // guards what follows
  std::string output;
  bool closing = false;  // after a protocol error: close once written
  bool closed = false;

  // Writes what the socket takes now; the rest waits for this server's
  // thread. REQUIRES: mutex held.
  void Flush() {
    while (!output.empty() && !closed) {
      const ssize_t written = send(fd, output.data(), output.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (written <= 0) break;
      output.erase(0, static_cast<size_t>(written));
    }
  }

  void Send(std::string frame) {
    std::lock_guard<std::mutex> lock(mutex);
    if (closed) return;
    const bool was_empty = output.empty();
    output.append(frame);
    if (was_empty) Flush();
    if (!output.empty()) {
      const uint64_t one = 1;
      (void)!write(wakeup, &one, sizeof(one));
    }
  }
};

absl::StatusOr<std::unique_ptr<CqlServer>> CqlServer::Start(const std::string& address, Node& node) {
  sockaddr_in socket_address;
  if (!ParseAddress(address, socket_address)) {
    return absl::InvalidArgumentError(absl::StrCat("cql_address: \"", address, "\" is not an IPv4 host:port"));
  }
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const int reuse = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &reuse, sizeof(reuse));
  if (bind(listener, reinterpret_cast<sockaddr*>(&socket_address), sizeof(socket_address)) != 0 ||
      listen(listener, 128) != 0) {
    close(listener);
    return absl::FailedPreconditionError(absl::StrCat("cql_address: cannot listen on ", address, " (port in use?)"));
  }
  const int wakeup = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  std::unique_ptr<CqlServer> server(new CqlServer(node, listener, wakeup));
  server->thread_ = std::thread([raw = server.get()] { raw->Loop(); });
  return server;
}

CqlServer::CqlServer(Node& node, int listener, int wakeup)
    : node_(node), listener_(listener), wakeup_(wakeup), epoll_(epoll_create1(EPOLL_CLOEXEC)),
      backend_(std::make_unique<NodeBackend>(node)) {
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = listener_;
  epoll_ctl(epoll_, EPOLL_CTL_ADD, listener_, &event);
  event.data.fd = wakeup_;
  epoll_ctl(epoll_, EPOLL_CTL_ADD, wakeup_, &event);
}

CqlServer::~CqlServer() {
  stopping_ = true;
  const uint64_t one = 1;
  (void)!write(wakeup_, &one, sizeof(one));
  if (thread_.joinable()) thread_.join();
  while (!clients_.empty()) Close(clients_.begin()->first);
  close(listener_);
  close(wakeup_);
  close(epoll_);
}

void CqlServer::Loop() {
  epoll_event events[64];
  while (!stopping_) {
    const int count = epoll_wait(epoll_, events, 64, 1000);
    for (int i = 0; i < count; i++) {
      const int fd = events[i].data.fd;
      if (fd == listener_) {
        Accept();
      } else if (fd == wakeup_) {
        uint64_t ignored;
        (void)!read(wakeup_, &ignored, sizeof(ignored));
      } else if (auto it = clients_.find(fd); it != clients_.end()) {
        Read(it->second);
      }
    }
    // Write what answers left behind, and close what is done.
    std::vector<int> done;
    for (auto& [fd, client] : clients_) {
      std::lock_guard<std::mutex> lock(client->mutex);
      client->Flush();
      epoll_event event{};
      event.events = EPOLLIN | (client->output.empty() ? 0u : static_cast<uint32_t>(EPOLLOUT));
      event.data.fd = fd;
      epoll_ctl(epoll_, EPOLL_CTL_MOD, fd, &event);
      if (client->closing && client->output.empty()) done.push_back(fd);
    }
    for (int fd : done) Close(fd);
  }
}

void CqlServer::Accept() {
  while (true) {
    const int fd = accept4(listener_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    auto client = std::make_shared<Client>();
    client->fd = fd;
    client->wakeup = wakeup_;
    std::weak_ptr<Client> weak = client;
    client->connection = std::make_unique<cql::Connection>(
        *node_.config().cql_schema, prepared_, *backend_, [weak](std::string frame) {
          if (std::shared_ptr<Client> alive = weak.lock()) alive->Send(std::move(frame));
        });
    clients_[fd] = client;
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &event);
  }
}

void CqlServer::Read(const std::shared_ptr<Client>& client) {
  char buffer[64 * 1024];
  while (true) {
    const ssize_t got = recv(client->fd, buffer, sizeof(buffer), 0);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      std::lock_guard<std::mutex> lock(client->mutex);
      client->closing = true;
      client->output.clear();
      return;
    }
    if (got < 0) break;
    client->input.append(buffer, static_cast<size_t>(got));
  }
  // Whole frames go to the connection; a frame too big is refused unread.
  while (client->input.size() >= cql::kHeaderBytes && !client->closing) {
    const cql::FrameHeader header = cql::ParseHeader(client->input);
    if (header.body_bytes > cql::kMaxBodyBytes) {
      client->connection->RejectOversized(header);
      std::lock_guard<std::mutex> lock(client->mutex);
      client->closing = true;
      break;
    }
    if (client->input.size() < cql::kHeaderBytes + header.body_bytes) break;
    const std::string_view body = std::string_view(client->input).substr(cql::kHeaderBytes, header.body_bytes);
    const bool go_on = client->connection->OnFrame(header, body);
    client->input.erase(0, cql::kHeaderBytes + header.body_bytes);
    if (!go_on) {
      std::lock_guard<std::mutex> lock(client->mutex);
      client->closing = true;
    }
  }
}

void CqlServer::Close(int fd) {
  auto it = clients_.find(fd);
  if (it == clients_.end()) return;
  {
    std::lock_guard<std::mutex> lock(it->second->mutex);
    it->second->closed = true;
    epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
    close(fd);
  }
  clients_.erase(it);
}

}  // namespace charybdis::node
