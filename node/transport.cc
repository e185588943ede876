#include "node/transport.h"

#include "core/assert.h"
#include "node/peer_link.h"

namespace charybdis::node {

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
  void Receive(const Envelope& message) {
    if (receiver_) receiver_(message);
  }

 private:
  Transport& transport_;
  const Address self_;
  Receiver receiver_;
};

Transport::Transport(NodeId self, std::map<NodeId, std::string> peers,
                     std::vector<ShardThread*> shards)
    : self_(self), shards_(std::move(shards)) {
  for (ShardId shard = 0; shard < shards_.size(); shard++) {
    shard_networks_.push_back(std::make_unique<ShardNetwork>(*this, Address{self, shard}));
  }
  for (auto& [node, address] : peers) {
    CHARYBDIS_ASSERT(node != self);
    links_.emplace(node, std::make_unique<PeerLink>(address));
  }
}

Transport::~Transport() { Stop(); }

Network* Transport::network(ShardId shard) { return shard_networks_.at(shard).get(); }

void Transport::Stop() {
  RefuseClients();
  for (auto& [node, link] : links_) link->Stop();
}

bool Transport::IsBlocked(NodeId node) const {
  std::lock_guard<std::mutex> lock(mutex_);
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
  auto link = links_.find(to);
  if (link == links_.end() || IsBlocked(to)) return;
  link->second->Send(std::move(message));
}

void Transport::OnInbound(const Envelope& message) {
  if (message.to_node() != self_ || IsBlocked(message.from_node())) return;
  Route(message);
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
  std::lock_guard<std::mutex> lock(mutex_);
  blocked_ = std::move(nodes);
}

std::set<NodeId> Transport::blocked() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return blocked_;
}

grpc::Status InternodeService::Stream(grpc::ServerContext*, grpc::ServerReader<EnvelopeBatch>* reader,
                                      StreamClosed*) {
  EnvelopeBatch batch;
  while (reader->Read(&batch)) {
    for (const Envelope& message : batch.envelope()) transport_.OnInbound(message);
  }
  return grpc::Status::OK;
}

}  // namespace charybdis::node
