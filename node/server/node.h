#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/env/buggify.h"
#include "core/env/random.h"
#include "core/shard.h"
#include "node/server/client_api_auth.h"
#include "node/server/config.h"
#include "node/server/rocksdb_storage.h"
#include "rocksdb/env.h"
#include "node/server/shard_thread.h"
#include "node/server/transport.h"

namespace grpc {
class Server;
}

namespace charybdis::node {

class ClientService;
class CqlServer;
class MetricsServer;

// One shard's metrics, copied on its own thread.
struct MetricsSnapshot {
  std::vector<std::pair<std::string, uint64_t>> counters;
  std::vector<std::pair<std::string, Histogram>> histograms;
};

// A running node: one thread per shard with its reactor, storage (RocksDB)
// and core Shard; the internode transport; the client API (gRPC, and CQL
// when configured); /metrics.
class Node {
 public:
  // Claims the data directory, opens every shard's RocksDB, listens, and
  // starts the shards. Errors (a directory of another node or in use, a
  // port in use) come back as FailedPrecondition.
  static absl::StatusOr<std::unique_ptr<Node>> Start(LoadedConfig config);
  ~Node();

  // Graceful: stop accepting requests, let in-flight ones finish (up to
  // the longest request timeout), fail the rest, close RocksDB.
  void Shutdown();

  // The client API (any thread; answers come on a shard's thread).
  void Execute(const ExecuteRequest& request, std::function<void(ClientResponse)> reply);
  // Whether a call of the gRPC client API may run (docs/security.md), on a
  // node that asks for passwords: the CQL server's answer (ClientApiAuth).
  // `peer`: the caller's address.
  void CheckClientCall(std::string peer, std::optional<auth::Credentials> credentials, CallNeeds needs,
                       std::function<void(grpc::Status)> done);
  // CqlServer::FollowClientSchemaChange. REQUIRES: the node asks for
  // passwords.
  void FollowClientSchemaChange(std::string role, ClientRequest request, ClientResponse response,
                                std::function<void(bool)> done);
  void Status(std::function<void(StatusResponse)> done);
  void Block(std::set<NodeId> nodes) { transport_->Block(std::move(nodes)); }
  // Prometheus text: one series per shard (label `shard`), core's names.
  void Metrics(std::function<void(std::string)> done);
  // The same, waiting for it (for the HTTP page's own threads).
  std::string MetricsText();

  const LoadedConfig& config() const { return config_; }
  // The CQL schema as shard 0 last published it (any thread).
  SchemaSnapshot Schema() const;
  std::shared_ptr<const cql::Schema> CqlSchema() const;  // Schema().schema, without copying the rest

 private:
  explicit Node(LoadedConfig config);
  absl::Status Open();
  absl::Status OpenShardStorage(const std::string& directory, std::vector<ShardThread*>& threads);
  // The CQL server, if the node has a CQL address, with its warnings.
  absl::Status StartCql();

  struct ShardParts {
    std::unique_ptr<ShardThread> thread;
    std::unique_ptr<RocksDbStorage> storage;
    Random random{0};
    std::unique_ptr<Shard> shard;
  };

  LoadedConfig config_;
  NeverBuggify buggify_;
  // The shards' RocksDB environment (it outlives them): sized WAL files,
  // and the power-loss journal when the config asks for it.
  std::unique_ptr<rocksdb::Env> storage_env_;
  std::vector<ShardParts> shards_;
  std::unique_ptr<Transport> transport_;
  std::unique_ptr<ClientService> client_service_;
  std::unique_ptr<grpc::Server> client_server_;
  std::unique_ptr<MetricsServer> metrics_server_;
  std::mutex cql_server_mutex_;  // guards cql_server_ against Shutdown, for gRPC threads
  std::unique_ptr<CqlServer> cql_server_;
  std::atomic<uint64_t> next_shard_{0};
  bool shut_down_ = false;
  mutable std::mutex schema_mutex_;
  SchemaSnapshot schema_;  // guarded by schema_mutex_
};

}  // namespace charybdis::node
