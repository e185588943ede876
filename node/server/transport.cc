#include "node/server/transport.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "node/server/log.h"
#include "node/server/socket_address.h"

namespace charybdis::node {

namespace {

// A socket on its way to a shard: closed if the shard stops before it
// takes it.
class OwnedFd {
 public:
  OwnedFd(int fd, std::shared_ptr<SocketStream> stream) : fd_(fd), stream_(std::move(stream)) {}
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  ~OwnedFd() {
    if (fd_ >= 0) close(fd_);
  }
  int Release() { return std::exchange(fd_, -1); }
  std::shared_ptr<SocketStream> stream() const { return stream_; }

 private:
  int fd_;
  std::shared_ptr<SocketStream> stream_;
};

}  // namespace

// A shard's view of the transport (the core Network interface). Its
// receiver is set and used on the shard's own thread only.
class Transport::ShardNetwork final : public Network {
 public:
  ShardNetwork(Transport& transport, Address self) : transport_(transport), self_(self) {}

  void Send(const Address& to, Envelope message) override {
    message.set_from_node(self_.node);
    message.set_from_shard(self_.shard);
    message.set_to_node(to.node);
    message.set_to_shard(to.shard);
    transport_.Route(std::move(message));
  }
  void SetReceiver(Receiver receiver) override { receiver_ = std::move(receiver); }
  void LearnAddress(NodeId node, const std::string& address) override {
    transport_.LearnAddress(self_.shard, node, address);
  }
  void Receive(const Envelope& message) {
    if (receiver_) receiver_(message);
  }

 private:
  Transport& transport_;
  const Address self_;
  Receiver receiver_;
};

absl::StatusOr<std::unique_ptr<Transport>> Transport::Create(NodeId self, const std::map<NodeId, std::string>& peers,
                                                             std::vector<ShardThread*> shards, InternodeTls tls) {
  std::map<NodeId, sockaddr_in> resolved;
  for (const auto& [node, address] : peers) {
    CHARYBDIS_ASSERT(node != self);
    auto socket_address = ResolveIpv4HostPort(address);
    if (!socket_address.ok()) {
      return absl::FailedPreconditionError(absl::StrCat("internode_address of node ", node, ": ",
                                                        socket_address.status().message()));
    }
    resolved.emplace(node, *socket_address);
  }
  return std::unique_ptr<Transport>(new Transport(self, std::move(resolved), std::move(shards), std::move(tls)));
}

Transport::Transport(NodeId self, std::map<NodeId, sockaddr_in> peers, std::vector<ShardThread*> shards,
                     InternodeTls tls)
    : self_(self), shards_(std::move(shards)), tls_(std::move(tls)) {
  for (ShardId shard = 0; shard < shards_.size(); shard++) {
    shard_networks_.push_back(std::make_unique<ShardNetwork>(*this, Address{self, shard}));
    links_.push_back(std::make_unique<ShardLinks>(
        *shards_[shard], Address{self, shard}, peers, tls_.calling,
        [this, shard](const Envelope& message) { DeliverInbound(shard, message); }));
    ShardLinks* links = links_.back().get();
    shards_[shard]->SetEndOfTurn([links] { links->Flush(); });
  }
}

Transport::~Transport() { Stop(); }

absl::Status Transport::Listen(const std::string& address) {
  auto handoff = [this](ShardId shard, int fd, std::shared_ptr<SocketStream> stream) {
    ShardLinks* links = links_[shard].get();
    auto socket = std::make_shared<OwnedFd>(fd, std::move(stream));
    shards_[shard]->Post([links, socket] { links->Adopt(socket->Release(), socket->stream()); });
  };
  auto listener = InternodeListener::Start(address, self_, static_cast<ShardId>(shards_.size()), tls_.accepting,
                                           std::move(handoff));
  if (!listener.ok()) return listener.status();
  listener_ = std::move(*listener);
  return absl::OkStatus();
}

Network* Transport::network(ShardId shard) { return shard_networks_.at(shard).get(); }

ShardLinks::Counts Transport::link_counts(ShardId shard) const { return links_.at(shard)->counts(); }

void Transport::Stop() {
  RefuseClients();
  listener_.reset();
}

bool Transport::IsBlocked(NodeId node) const {
  std::lock_guard<std::mutex> lock(blocked_mutex_);
  return blocked_.count(node) > 0;
}

void Transport::Route(Envelope message) {
  const NodeId to = message.to_node();
  if (to == kClientEndpoint) {
    CHARYBDIS_ASSERT(message.has_client_response());
    ClientResponse response = std::move(*message.mutable_client_response());
    ClientReply reply;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = waiting_.find(response.request_id());
      if (it == waiting_.end()) return;  // answered already (a duplicate)
      response.set_request_id(it->second.first);
      reply = std::move(it->second.second);
      waiting_.erase(it);
    }
    reply(std::move(response));
    return;
  }
  if (to == self_) {
    const ShardId shard = message.to_shard();
    if (shard >= shards_.size()) return;
    ShardNetwork* network = shard_networks_[shard].get();
    shards_[shard]->Post([network, message = std::move(message)] { network->Receive(message); });
    return;
  }
  if (IsBlocked(to)) return;
  const ShardId from = message.from_shard();
  CHARYBDIS_ASSERT(message.from_node() == self_);
  CHARYBDIS_ASSERT(from < links_.size());
  links_[from]->Send(Address{to, message.to_shard()}, message);
}

void Transport::LearnAddress(ShardId shard, NodeId node, const std::string& address) {
  CHARYBDIS_ASSERT(shard < links_.size());
  if (node == self_ || node == kClientEndpoint || links_[shard]->Knows(node)) return;
  absl::StatusOr<sockaddr_in> resolved = ResolveIpv4HostPort(address);
  if (!resolved.ok()) {
    Log("warn", "a peer's internode address does not resolve: not reachable", {{"node", absl::StrCat(node)}, {"address", address}});
    return;
  }
  // Every shard may answer the node (a Paxos round reaches the shard that
  // owns its partition): each learns the address, on its own thread.
  links_[shard]->AddPeer(node, *resolved);
  for (ShardId other = 0; other < links_.size(); other++) {
    if (other == shard) continue;
    ShardLinks* links = links_[other].get();
    shards_[other]->Post([links, node, address = *resolved] { links->AddPeer(node, address); });
  }
}

void Transport::DeliverInbound(ShardId shard, const Envelope& message) {
  // The hello named this node and shard; a message naming others is a
  // confused peer's, and dropped like a lost one.
  if (message.to_node() != self_ || message.to_shard() != shard) return;
  if (IsBlocked(message.from_node())) return;
  shard_networks_[shard]->Receive(message);
}

bool Transport::SubmitClientRequest(ClientRequest request, ShardId shard, ClientReply reply) {
  CHARYBDIS_ASSERT(shard < shards_.size());
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!accepting_clients_) return false;
    id = ++last_client_call_;
    waiting_.emplace(id, std::make_pair(request.request_id(), std::move(reply)));
  }
  request.set_request_id(id);
  Envelope message;
  message.set_from_node(kClientEndpoint);
  message.set_from_shard(0);
  message.set_to_node(self_);
  message.set_to_shard(shard);
  *message.mutable_client_request() = std::move(request);
  Route(std::move(message));
  return true;
}

void Transport::AcceptClients() {
  std::lock_guard<std::mutex> lock(mutex_);
  accepting_clients_ = true;
}

void Transport::RefuseClients() {
  std::lock_guard<std::mutex> lock(mutex_);
  accepting_clients_ = false;
}

void Transport::FailWaitingClients(const ClientResponse& response) {
  std::map<uint64_t, std::pair<uint64_t, ClientReply>> waiting;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    waiting.swap(waiting_);
  }
  for (auto& [id, entry] : waiting) {
    ClientResponse failed = response;
    failed.set_request_id(entry.first);
    entry.second(std::move(failed));
  }
}

size_t Transport::waiting_clients() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return waiting_.size();
}

void Transport::Block(std::set<NodeId> nodes) {
  std::lock_guard<std::mutex> lock(blocked_mutex_);
  blocked_ = std::move(nodes);
}

std::set<NodeId> Transport::blocked() const {
  std::lock_guard<std::mutex> lock(blocked_mutex_);
  return blocked_;
}

}  // namespace charybdis::node
