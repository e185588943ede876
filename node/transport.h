#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/network.h"
#include "node/shard_thread.h"
#include "proto/node.grpc.pb.h"

namespace charybdis::node {

// Where answers to clients of this node's gRPC API go: not a cluster node
// (ids start at 1 and are far below this).
inline constexpr NodeId kClientEndpoint = 0xFFFFFFFFu;

class PeerLink;

// Carries Envelopes between shards: to a shard of this node through its
// mailbox, to another node over one long-lived gRPC stream per peer, and to
// this node's API clients through the calls waiting for them. Traffic to
// and from "blocked" nodes is dropped (how `ctl cluster partition` splits
// real nodes without root).
class Transport {
 public:
  using ClientReply = std::function<void(ClientResponse)>;

  // `peers`: node id -> internode address.
  Transport(NodeId self, std::map<NodeId, std::string> peers, std::vector<ShardThread*> shards);
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;
  ~Transport();

  // The core Network interface of one shard.
  Network* network(ShardId shard);

  void Stop();

  // Routes a message whose from/to fields are set.
  void Route(Envelope message);
  // A message that came in from a peer.
  void OnInbound(const Envelope& message);

  // Sends a client request to `shard`; `reply` gets the answer (on some
  // shard's thread). Returns false unless clients are accepted.
  bool SubmitClientRequest(ClientRequest request, ShardId shard, ClientReply reply);
  // Clients are refused until the node has started, and from the start of
  // its shutdown (or Stop) on.
  void AcceptClients();
  void RefuseClients();
  // Answers every waiting client call with `response` (shutdown).
  void FailWaitingClients(const ClientResponse& response);
  size_t waiting_clients() const;

  void Block(std::set<NodeId> nodes);
  std::set<NodeId> blocked() const;

 private:
  class ShardNetwork;
  bool IsBlocked(NodeId node) const;

  const NodeId self_;
  std::vector<ShardThread*> shards_;
  std::vector<std::unique_ptr<ShardNetwork>> shard_networks_;
  std::map<NodeId, std::unique_ptr<PeerLink>> links_;

  mutable std::mutex mutex_;
  std::set<NodeId> blocked_;                       // guarded by mutex_
  std::map<uint64_t, std::pair<uint64_t, ClientReply>> waiting_;  // id -> (client's id, reply)
  uint64_t last_client_call_ = 0;                  // guarded by mutex_
  bool accepting_clients_ = false;                 // guarded by mutex_
};

// The server side of the internode streams.
class InternodeService final : public Internode::Service {
 public:
  explicit InternodeService(Transport& transport) : transport_(transport) {}
  grpc::Status Stream(grpc::ServerContext* context, grpc::ServerReader<EnvelopeBatch>* reader,
                      StreamClosed* closed) override;

 private:
  Transport& transport_;
};

}  // namespace charybdis::node
