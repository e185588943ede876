#include "node/server/cql_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "core/data/token.h"
#include "core/env/assert.h"
#include "node/server/answer_once.h"
#include "node/server/cql_client.h"
#include "node/server/log.h"
#include "node/server/node.h"
#include "node/server/socket_address.h"

namespace charybdis::node {
namespace {

// Connections waiting for accept on each CQL port.
constexpr int kListenBacklog = 128;

}  // namespace

std::string HostIdOf(NodeId id) { return cql::NameUuid(absl::StrCat("charybdis-node-", id)); }

namespace {

cql::HostInfo Host(const Member& member, std::vector<std::string> tokens) {
  cql::HostInfo host;
  host.host_id = HostIdOf(member.id());
  host.datacenter = member.datacenter();
  host.rack = member.rack();
  host.tokens = std::move(tokens);
  sockaddr_in address;
  if (ParseIpv4HostPort(member.cql_address(), address)) {
    host.address.assign(reinterpret_cast<const char*>(&address.sin_addr), 4);
    host.native_port = ntohs(address.sin_port);
  } else {
    host.address = std::string("\x7f\x00\x00\x01", 4);
  }
  return host;
}

}  // namespace

struct CqlServer::PostQueue {
  std::mutex mutex;
  std::vector<std::function<void()>> tasks;
  int wakeup = -1;  // the server's eventfd; -1 once the server stopped

  void Post(std::function<void()> task) {
    std::lock_guard<std::mutex> lock(mutex);
    if (wakeup < 0) return;  // the server is gone: nothing waits for it
    tasks.push_back(std::move(task));
    const uint64_t one = 1;
    (void)!write(wakeup, &one, sizeof(one));
  }
};

namespace {

// What now() and uuid() read on a real node: the system clock and the
// kernel's random bits.
const cql::FunctionSources& RealFunctionSources() {
  static const cql::FunctionSources* sources = new cql::FunctionSources{
      [] {
        return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
      },
      [] {
        uint64_t bits = 0;
        const ssize_t got = getrandom(&bits, sizeof(bits), 0);
        CHARYBDIS_ASSERT(got == static_cast<ssize_t>(sizeof(bits)));  // 8 bytes never block or come short
        return bits;
      }};
  return *sources;
}

// The node's requests, each sent to the shard that owns its partition, so
// that it skips the hop between shards.
class NodeBackend final : public cql::Backend {
 public:
  // `hosts`: this node and every member drivers may use; `left`: those
  // that left the cluster (the server keeps both). `auth`: null for none.
  NodeBackend(Node& node, const std::map<uint32_t, cql::HostInfo>& hosts, const std::set<uint32_t>& left,
              std::shared_ptr<CqlServer::PostQueue> posted, cql::AuthService* auth)
      : node_(node), hosts_(hosts), left_(left), posted_(std::move(posted)), auth_(auth) {}

  void Post(std::function<void()> task) override { posted_->Post(std::move(task)); }
  std::function<void(std::function<void()>)> Poster() override {
    return [posted = posted_](std::function<void()> task) { posted->Post(std::move(task)); };
  }
  Nanos Now() override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  cql::AuthService* auth() override { return auth_; }
  const cql::FunctionSources& functions() override { return RealFunctionSources(); }

  void Execute(ClientRequest request, std::function<void(ClientResponse)> done) override {
    ExecuteRequest execute;
    execute.set_has_shard(true);
    execute.set_shard(cql::ShardFor(request, node_.config().node.shards));
    *execute.mutable_request() = std::move(request);
    node_.Execute(execute, std::move(done));
  }

  // Called on the server's thread only, like everything of a connection.
  const cql::ClusterView& Cluster() override {
    const SchemaSnapshot schema = node_.Schema();
    cluster_.local = hosts_.at(node_.config().node.id);
    cluster_.peers.clear();
    for (const auto& [id, host] : hosts_) {
      if (id == node_.config().node.id || left_.count(id)) continue;
      cql::HostInfo& peer = cluster_.peers.emplace_back(host);
      auto version = schema.peer_versions.find(id);
      peer.schema_version = version == schema.peer_versions.end() ? "" : version->second;
    }
    return cluster_;
  }

  std::shared_ptr<const cql::Schema> CurrentSchema() override { return node_.CqlSchema(); }

 private:
  Node& node_;
  const std::map<uint32_t, cql::HostInfo>& hosts_;
  const std::set<uint32_t>& left_;
  const std::shared_ptr<CqlServer::PostQueue> posted_;
  cql::AuthService* const auth_;
  cql::ClusterView cluster_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<CqlServer>> CqlServer::Start(const std::string& address, uint16_t shard_aware_port,
                                                            Node& node) {
  sockaddr_in socket_address;
  if (!ParseIpv4HostPort(address, socket_address)) {
    return absl::InvalidArgumentError(absl::StrCat("cql_address: \"", address, "\" is not an IPv4 host:port"));
  }
  const int listener = ListenTcp(socket_address, kListenBacklog);
  if (listener < 0) return absl::FailedPreconditionError(absl::StrCat("cql_address: cannot listen on ", address, " (port in use?)"));
  int shard_aware_listener = -1;
  if (shard_aware_port != 0) {
    socket_address.sin_port = htons(shard_aware_port);
    shard_aware_listener = ListenTcp(socket_address, kListenBacklog);
    if (shard_aware_listener < 0) {
      close(listener);
      return absl::FailedPreconditionError(absl::StrCat("cql_shard_aware_port: cannot listen on ", shard_aware_port, " (port in use?)"));
    }
  }
  std::shared_ptr<TlsContext> tls;
  const LoadedConfig& config = node.config();
  if (config.tls_clients != Tls::OFF) {
    auto loaded = TlsContext::Load(*config.tls_files, TlsSide::kServer, PeerCheck::kNone);
    if (!loaded.ok()) {
      close(listener);
      if (shard_aware_listener >= 0) close(shard_aware_listener);
      return absl::FailedPreconditionError(absl::StrCat("tls: ", loaded.status().message()));
    }
    tls = *std::move(loaded);
  }
  const int wakeup = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  std::unique_ptr<CqlServer> server(new CqlServer(node, listener, shard_aware_listener, wakeup));
  server->shard_aware_port_ = shard_aware_port;
  server->tls_ = std::move(tls);
  server->tls_clients_ = config.tls_clients;
  server->thread_ = std::thread([raw = server.get()] { raw->Loop(); });
  return server;
}

CqlServer::CqlServer(Node& node, int listener, int shard_aware_listener, int wakeup)
    : node_(node), listener_(listener), shard_aware_listener_(shard_aware_listener), wakeup_(wakeup),
      epoll_(epoll_create1(EPOLL_CLOEXEC)) {
  // The bootstrap members, on the static ring, and this node if it is new
  // (no tokens until it joined); members that join later come with the
  // node's status (WatchStatus).
  std::map<uint32_t, std::vector<std::string>> tokens;
  for (const auto& vnode : node.config().node.ring->tokens()) tokens[vnode.node].push_back(absl::StrCat(vnode.token));
  for (const Member& member : node.config().file.member()) hosts_[member.id()] = Host(member, tokens[member.id()]);
  if (node.config().node.new_node) {
    Member self;
    self.set_id(node.config().node.id);
    self.set_datacenter(node.config().node.new_node->datacenter);
    self.set_rack(node.config().node.new_node->rack);
    self.set_cql_address(node.config().node.new_node->cql_address);
    hosts_[self.id()] = Host(self, {});
  }
  posted_ = std::make_shared<PostQueue>();
  posted_->wakeup = wakeup_;
  if (node.config().cql_auth.required) {
    hasher_ = std::make_unique<BcryptHasher>([posted = posted_](std::function<void()> task) { posted->Post(std::move(task)); });
    auth_ = std::make_unique<cql::AuthService>(node.config().cql_auth, *hasher_);
  }
  backend_ = std::make_shared<NodeBackend>(node, hosts_, left_, posted_, auth_.get());
  if (auth_ != nullptr) client_api_auth_ = std::make_unique<ClientApiAuth>(*backend_);
  announced_schema_ = node.CqlSchema();
  spare_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  for (int fd : {listener_, shard_aware_listener_, wakeup_}) {
    if (fd < 0) continue;
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &event);
  }
}

CqlServer::~CqlServer() {
  stopping_ = true;
  const uint64_t one = 1;
  (void)!write(wakeup_, &one, sizeof(one));
  if (thread_.joinable()) thread_.join();
  {
    std::lock_guard<std::mutex> lock(posted_->mutex);
    posted_->wakeup = -1;
    posted_->tasks.clear();
  }
  while (!clients_.empty()) Close(clients_.begin()->first);
  close(listener_);
  if (shard_aware_listener_ >= 0) close(shard_aware_listener_);
  close(wakeup_);
  close(epoll_);
  if (spare_fd_ >= 0) close(spare_fd_);
}

void CqlServer::CheckClientCall(std::string peer, std::optional<auth::Credentials> credentials, CallNeeds needs,
                                std::function<void(grpc::Status)> done) {
  auto answer = std::make_shared<AnswerOnce<grpc::Status>>(
      std::move(done), grpc::Status(grpc::StatusCode::UNAVAILABLE, "the node is shutting down"));
  CHARYBDIS_ASSERT(client_api_auth_ != nullptr);  // asked only of a node that asks for passwords
  posted_->Post([this, peer = std::move(peer), credentials = std::move(credentials), needs = std::move(needs), answer] {
    client_api_auth_->Check(peer, credentials, needs, [answer](grpc::Status status) { answer->Send(std::move(status)); });
  });
}

void CqlServer::FollowClientSchemaChange(std::string role, ClientRequest request, ClientResponse response,
                                         std::function<void(bool)> done) {
  auto answer = std::make_shared<AnswerOnce<bool>>(std::move(done), false);
  CHARYBDIS_ASSERT(client_api_auth_ != nullptr);  // asked only of a node that asks for passwords
  posted_->Post([this, role = std::move(role), request = std::move(request), response = std::move(response), answer] {
    client_api_auth_->FollowSchemaChange(role, request, response, [answer](bool written) { answer->Send(written); });
  });
}

void CqlServer::Loop() {
  epoll_event events[64];
  while (!stopping_) {
    const int count = epoll_wait(epoll_, events, 64, 100);
    for (int i = 0; i < count; i++) {
      const int fd = events[i].data.fd;
      if (fd == listener_ || fd == shard_aware_listener_) {
        Accept(fd);
      } else if (fd == wakeup_) {
        uint64_t ignored;
        (void)!read(wakeup_, &ignored, sizeof(ignored));
      } else if (auto it = clients_.find(fd); it != clients_.end()) {
        OnEvent(it->second, events[i].events);
      }
    }
    RunPosted();
    WatchStatus();
    WatchSchema();
    CloseUnready();
  }
}

void CqlServer::CloseUnready() {
  const auto now = std::chrono::steady_clock::now();
  if (now < next_unready_check_) return;
  next_unready_check_ = now + std::chrono::seconds(1);
  std::vector<int> late;
  for (auto& [fd, client] : clients_) {
    if (now >= client->ready_by && client->Unready()) late.push_back(fd);
  }
  for (int fd : late) {
    Log("warn", "cql_tls_refused", {{"peer", clients_.at(fd)->peer}, {"why", "no TLS handshake within 10 s"}});
    Close(fd);
  }
}

void CqlServer::RunPosted() {
  std::vector<std::function<void()>> tasks;
  {
    std::lock_guard<std::mutex> lock(posted_->mutex);
    tasks.swap(posted_->tasks);
  }
  for (auto& task : tasks) task();
}

void CqlServer::OnEvent(std::shared_ptr<Client> client, uint32_t events) {
  if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) || client->ReadWaitsForOutput()) Read(client);
  bool done;
  {
    std::lock_guard<std::mutex> lock(client->mutex);
    client->Flush();
    client->UpdateInterest();
    done = client->closing && client->output.empty();
  }
  if (done) Close(client->fd);
}

void CqlServer::WatchStatus() {
  constexpr auto kStatusInterval = std::chrono::milliseconds(200);
  std::optional<std::set<uint32_t>> up;
  bool ask = false;
  {
    std::lock_guard<std::mutex> lock(status_->mutex);
    up.swap(status_->up);
    ask = !status_->asked && std::chrono::steady_clock::now() - status_asked_at_ >= kStatusInterval;
    status_->asked = status_->asked || ask;
  }
  if (ask) {
    // Not under the lock: a node stopping answers at once, on this thread.
    status_asked_at_ = std::chrono::steady_clock::now();
    node_.Status([answer = status_](StatusResponse status) {
      std::lock_guard<std::mutex> lock(answer->mutex);
      answer->up = std::set<uint32_t>(status.up().begin(), status.up().end());
      answer->left.clear();
      for (const auto& [id, state] : status.member_state()) {
        if (state == "left") answer->left.insert(id);
      }
      answer->normal.clear();
      for (const Member& member : status.member()) {
        auto state = status.member_state().find(member.id());
        if (state != status.member_state().end() && (state->second == "normal" || state->second == "leaving")) {
          answer->normal.push_back(member);
        }
      }
      answer->tokens.clear();
      for (const RingEntry& entry : status.ring()) answer->tokens[entry.node()].push_back(absl::StrCat(entry.token()));
      answer->asked = false;
    });
  }
  if (!up) return;
  std::set<uint32_t> left;
  std::vector<Member> normal;
  std::map<uint32_t, std::vector<std::string>> tokens;
  {
    std::lock_guard<std::mutex> lock(status_->mutex);
    left = status_->left;
    normal = status_->normal;
    tokens = status_->tokens;
  }
  AnnounceJoined(normal, tokens);
  AnnounceLeft(left);
  // The first answer is the baseline: drivers learn the start from
  // system.peers, not from events.
  if (announced_up_) {
    for (const auto& [id, host] : hosts_) {
      const bool was = announced_up_->count(id) > 0, is = up->count(id) > 0;
      if (was == is || id == node_.config().node.id) continue;
      const cql::Event event = cql::NodeEvent("STATUS_CHANGE", is ? "UP" : "DOWN", host.address, host.native_port);
      for (auto& [fd, client] : clients_) client->connection->Push(event);
    }
  }
  announced_up_ = std::move(up);
}

// Each host's tokens follow the topology's owners; a member that joined is
// announced once it is normal (TOPOLOGY_CHANGE NEW_NODE), as Cassandra
// announces a node that finished bootstrapping, and enters system.peers.
void CqlServer::AnnounceJoined(const std::vector<Member>& normal,
                               const std::map<uint32_t, std::vector<std::string>>& tokens) {
  for (auto& [id, host] : hosts_) {
    auto owned = tokens.find(id);
    if (owned != tokens.end()) host.tokens = owned->second;
  }
  for (const Member& member : normal) {
    if (hosts_.count(member.id())) continue;
    auto owned = tokens.find(member.id());
    const cql::HostInfo& host = hosts_[member.id()] = Host(member, owned == tokens.end() ? std::vector<std::string>() : owned->second);
    const cql::Event event = cql::NodeEvent("TOPOLOGY_CHANGE", "NEW_NODE", host.address, host.native_port);
    for (auto& [fd, client] : clients_) client->connection->Push(event);
  }
}

// A member that left is announced once, as Cassandra announces a
// decommissioned or removed node, and leaves system.peers.
void CqlServer::AnnounceLeft(const std::set<uint32_t>& left) {
  for (uint32_t id : left) {
    if (left_.count(id) || !hosts_.count(id) || id == node_.config().node.id) continue;
    const cql::HostInfo& host = hosts_.at(id);
    const cql::Event event = cql::NodeEvent("TOPOLOGY_CHANGE", "REMOVED_NODE", host.address, host.native_port);
    for (auto& [fd, client] : clients_) client->connection->Push(event);
  }
  left_.insert(left.begin(), left.end());
}

void CqlServer::WatchSchema() {
  std::shared_ptr<const cql::Schema> now = node_.CqlSchema();
  if (now == announced_schema_) return;
  for (const cql::SchemaChange& change : cql::SchemaChangesBetween(*announced_schema_, *now)) {
    const cql::Event event = cql::SchemaEvent(change);
    for (auto& [fd, client] : clients_) client->connection->Push(event);
  }
  announced_schema_ = std::move(now);
}

void CqlServer::Accept(int listener) {
  while (true) {
    sockaddr_in peer{};
    socklen_t peer_size = sizeof(peer);
    const int fd = accept4(listener, reinterpret_cast<sockaddr*>(&peer), &peer_size, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0 && (errno == EMFILE || errno == ENFILE) && spare_fd_ >= 0) {
      // Out of descriptors: refuse the one waiting (close it) rather than
      // leave the listener readable and this thread spinning.
      close(spare_fd_);
      const int refused = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (refused >= 0) close(refused);
      spare_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
      Log("warning", "cql_refused_connection", {{"why", "out of file descriptors"}});
      continue;
    }
    if (fd < 0) return;
    const uint32_t shards = node_.config().node.shards;
    cql::ShardInfo shard{0, shards, IgnoreMsbBits(shards), shard_aware_port_};
    shard.shard = listener == shard_aware_listener_ ? ntohs(peer.sin_port) % shards : next_shard_++ % shards;
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    auto client = std::make_shared<Client>();
    client->fd = fd;
    client->epoll = epoll_;
    client->ready_by = std::chrono::steady_clock::now() + Client::kHandshakeTimeout;
    std::weak_ptr<Client> weak = client;
    char peer_text[INET_ADDRSTRLEN] = "";
    inet_ntop(AF_INET, &peer.sin_addr, peer_text, sizeof(peer_text));
    client->peer = peer_text;
    client->connection = std::make_unique<cql::Connection>(
        prepared_, *backend_, shard, peer_text, [weak](std::string frame) {
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
  std::string why;
  if (!client->ReadAvailable(tls_.get(), tls_clients_ != Tls::REQUIRED, why)) {
    // The client is gone, or its TLS failed: nothing left is worth writing.
    if (why.rfind("TLS", 0) == 0) Log("warn", "cql_tls_refused", {{"peer", client->peer}, {"why", why}});
    std::lock_guard<std::mutex> lock(client->mutex);
    client->closing = true;
    client->output.clear();
    return;
  }
  // Whole frames go to the connection; a frame too big is refused unread.
  std::string_view input = client->input;
  bool go_on = true;
  while (go_on && input.size() >= cql::kHeaderBytes) {
    const cql::FrameHeader header = cql::ParseHeader(input);
    if (header.body_bytes > cql::kMaxBodyBytes) {
      client->connection->RejectOversized(header);
      go_on = false;
      break;
    }
    if (input.size() < cql::kHeaderBytes + header.body_bytes) break;
    go_on = client->connection->OnFrame(header, input.substr(cql::kHeaderBytes, header.body_bytes));
    input.remove_prefix(cql::kHeaderBytes + header.body_bytes);
  }
  client->input.erase(0, client->input.size() - input.size());
  if (!go_on) {
    std::lock_guard<std::mutex> lock(client->mutex);
    client->closing = true;
    client->input.clear();
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
