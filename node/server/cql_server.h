#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "core/cql/auth_service.h"
#include "core/cql/connection.h"
#include "node/server/client_api_auth.h"
#include "node/server/password_hashing.h"
#include "node/tls/tls_context.h"
#include "proto/node.pb.h"

namespace charybdis::node {

class Node;

// A node's host id (16 bytes), as system.local, system.peers and ctl
// status give it: a name-based UUID of its id, which is never reused.
std::string HostIdOf(NodeId id);

// The CQL native protocol on a TCP port: one thread with epoll reads every
// connection, frames it and hands the frames to core's cql::Connection;
// answers are written by the thread that finished them (a shard's), or
// by this thread when the socket is full. A connection that breaks the
// protocol gets its error and is closed; the others go on.
//
// Connections on the shard-aware port (ScyllaDB's extension) are on shard
// client port % shards; the others take shards in turn. Every request
// goes to the shard that owns its partition either way: this thread
// hands it over directly, so no request hops between shards.
//
// Drivers that REGISTER for STATUS_CHANGE hear when this node's failure
// detector sees another node go down or come up, and for SCHEMA_CHANGE
// when this node's schema changes, whoever made the change.
class CqlServer {
 public:
  // `shard_aware_port`: 0 for none.
  static absl::StatusOr<std::unique_ptr<CqlServer>> Start(const std::string& address, uint16_t shard_aware_port,
                                                          Node& node);
  ~CqlServer();

  // A call of the gRPC client API, checked on this server's thread when
  // the node asks for passwords (ClientApiAuth); `done` gets OK, the
  // refusal, or UNAVAILABLE when this server stops first.
  void CheckClientCall(std::string peer, std::optional<auth::Credentials> credentials, CallNeeds needs,
                       std::function<void(grpc::Status)> done);
  // After a schema change of the gRPC client API was answered: its grants
  // follow on this server's thread (ClientApiAuth::FollowSchemaChange);
  // `done` gets whether they were written (false when this server stops
  // first).
  void FollowClientSchemaChange(std::string role, ClientRequest request, ClientResponse response,
                                std::function<void(bool)> done);

  struct Client;
  // Callbacks other threads hand to this server's thread (Backend::Post);
  // shared, so that a late one finds it closed rather than gone.
  struct PostQueue;

 private:
  CqlServer(Node& node, int listener, int shard_aware_listener, int wakeup);
  void Loop();
  void Accept(int listener);
  void OnEvent(std::shared_ptr<Client> client, uint32_t events);
  void Read(const std::shared_ptr<Client>& client);
  void Close(int fd);
  // Closes, once a second, the connections past their handshake timeout.
  void CloseUnready();
  // Runs what other threads posted (Backend::Post).
  void RunPosted();
  // Asks the node who is up and who left, at most every kStatusInterval,
  // and tells the registered connections what changed.
  void WatchStatus();
  void AnnounceJoined(const std::vector<Member>& normal, const std::map<uint32_t, std::vector<std::string>>& tokens);
  void AnnounceLeft(const std::set<uint32_t>& left);
  // Tells the registered connections what changed in the schema since
  // they were last told (the diff, so a change learned from a peer or
  // made through another node is announced alike).
  void WatchSchema();

  Node& node_;
  int listener_ = -1;
  int shard_aware_listener_ = -1;  // -1: none
  uint16_t shard_aware_port_ = 0;
  int wakeup_ = -1;  // an eventfd: the destructor wakes this thread with it
  int spare_fd_ = -1;  // given up to refuse a connection when out of fds
  int epoll_ = -1;
  std::atomic<bool> stopping_{false};
  std::shared_ptr<PostQueue> posted_;
  // Before backend_, which points at it; after posted_, into which its
  // workers post (destroyed first: it joins them).
  std::unique_ptr<BcryptHasher> hasher_;
  std::unique_ptr<cql::AuthService> auth_;  // null: the port asks for no password
  std::shared_ptr<cql::Backend> backend_;
  std::unique_ptr<ClientApiAuth> client_api_auth_;  // with auth_
  std::map<uint32_t, cql::HostInfo> hosts_;  // every member, by node id
  cql::PreparedStatements prepared_;  // this thread's only
  std::map<int, std::shared_ptr<Client>> clients_;
  std::shared_ptr<TlsContext> tls_;  // null: clear only
  Tls::Clients tls_clients_ = Tls::OFF;
  std::chrono::steady_clock::time_point next_unready_check_;
  uint32_t next_shard_ = 0;
  // Who is up: what the connections were last told, and the node's newest
  // answer, which comes on shard 0's thread (shared: it may come after
  // this server is gone).
  struct StatusAnswer {
    std::mutex mutex;
    std::optional<std::set<uint32_t>> up;
    std::set<uint32_t> left;  // members the node's topology says have left
    std::vector<Member> normal;  // members normal or leaving, with their addresses
    std::map<uint32_t, std::vector<std::string>> tokens;  // of the owners now, by node
    bool asked = false;
  };
  std::optional<std::set<uint32_t>> announced_up_;
  // Members that left the cluster, as last announced (TOPOLOGY_CHANGE
  // REMOVED_NODE); system.peers leaves them out.
  std::set<uint32_t> left_;
  std::shared_ptr<StatusAnswer> status_ = std::make_shared<StatusAnswer>();
  std::chrono::steady_clock::time_point status_asked_at_;
  std::shared_ptr<const cql::Schema> announced_schema_;
  std::thread thread_;
};

}  // namespace charybdis::node
