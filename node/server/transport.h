#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/env/network.h"
#include "node/server/internode_listener.h"
#include "node/server/shard_links.h"
#include "node/server/shard_thread.h"
#include "proto/client.pb.h"

namespace charybdis::node {

// Where answers to clients of this node's gRPC API go: not a cluster node
// (ids start at 1 and are far below this).
inline constexpr NodeId kClientEndpoint = 0xFFFFFFFFu;

// Carries Envelopes between shards: to a shard of this node through its
// mailbox, to another node over TCP connections that the sending and the
// receiving shards' threads write and read themselves (node/server/shard_links),
// and to this node's API clients through the calls waiting for them.
// Traffic to and from "blocked" nodes is dropped (how `ctl cluster
// partition` splits real nodes without root).
class Transport {
 public:
  using ClientReply = std::function<void(ClientResponse)>;

  // `peers`: node id -> internode address (host:port, resolved now).
  // `tls`: its contexts null for links in clear. Call before the shard
  // threads start.
  static absl::StatusOr<std::unique_ptr<Transport>> Create(NodeId self, const std::map<NodeId, std::string>& peers,
                                                           std::vector<ShardThread*> shards, InternodeTls tls);
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;
  // Closes the connections: only once the shard threads have stopped.
  ~Transport();

  // Accepts peers' connections on `address` (FailedPrecondition if it
  // cannot).
  absl::Status Listen(const std::string& address);

  // The core Network interface of one shard.
  Network* network(ShardId shard);
  // What `shard`'s links to peers sent (on that shard's thread).
  ShardLinks::Counts link_counts(ShardId shard) const;

  // Stops accepting clients and peers' connections.
  void Stop();

  // Routes a message whose from/to fields are set: on the sending shard's
  // thread when it goes to a peer.
  void Route(Envelope message);

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
  Transport(NodeId self, std::map<NodeId, sockaddr_in> peers, std::vector<ShardThread*> shards, InternodeTls tls);
  bool IsBlocked(NodeId node) const;
  // Network::LearnAddress of `shard`, on its thread: every shard learns it.
  void LearnAddress(ShardId shard, NodeId node, const std::string& address);
  // A message from a peer, on `shard`'s thread.
  void DeliverInbound(ShardId shard, const Envelope& message);

  const NodeId self_;
  std::vector<ShardThread*> shards_;
  const InternodeTls tls_;
  std::vector<std::unique_ptr<ShardNetwork>> shard_networks_;
  std::vector<std::unique_ptr<ShardLinks>> links_;  // by shard
  std::unique_ptr<InternodeListener> listener_;

  // Its own lock: every internode message asks it, and must not wait
  // behind client calls.
  mutable std::mutex blocked_mutex_;
  std::set<NodeId> blocked_;  // guarded by blocked_mutex_

  mutable std::mutex mutex_;
  std::map<uint64_t, std::pair<uint64_t, ClientReply>> waiting_;  // id -> (client's id, reply)
  uint64_t last_client_call_ = 0;                  // guarded by mutex_
  bool accepting_clients_ = false;                 // guarded by mutex_
};

}  // namespace charybdis::node
