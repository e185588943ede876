#include "node/server/node.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>

#include <chrono>
#include <future>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "core/topology/placement.h"
#include "core/topology/topology_log.h"
#include "node/server/answer_once.h"
#include "node/server/client_service.h"
#include "node/server/cql_server.h"
#include "node/server/log.h"
#include "node/server/metrics_server.h"
#include "node/server/power_loss_fs.h"
#include "node/server/sized_wal_fs.h"

namespace charybdis::node {

namespace {

namespace fs = std::filesystem;

// Which node a data directory belongs to, claimed on first start.
absl::Status ClaimDataDirectory(const std::string& directory, NodeId id) {
  std::error_code error;
  fs::create_directories(directory, error);
  if (error) {
    return absl::FailedPreconditionError(
        absl::StrCat("data_directory: cannot create ", directory, ": ", error.message()));
  }
  const fs::path marker = fs::path(directory) / "NODE_ID";
  std::ifstream existing(marker);
  if (existing) {
    NodeId owner = 0;
    existing >> owner;
    if (owner != id) {
      return absl::FailedPreconditionError(absl::StrCat(
          "data_directory: ", directory, " belongs to node ", owner, ", not node ", id));
    }
    return absl::OkStatus();
  }
  std::ofstream claim(marker);
  claim << id << "\n";
  if (!claim) {
    return absl::FailedPreconditionError(absl::StrCat("data_directory: cannot write ", marker.string()));
  }
  return absl::OkStatus();
}

// TLS for the gRPC client API, from the node's files, which gRPC looks
// at again every second (certificates replaced without a restart); the
// client shows no certificate (ctl and harnesses log in otherwise).
std::shared_ptr<grpc::ServerCredentials> ClientApiCredentials(const LoadedConfig& config) {
  if (config.tls_clients == Tls::OFF) return grpc::InsecureServerCredentials();
  const TlsFiles& files = *config.tls_files;
  auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      files.private_key_file, files.certificate_file, files.ca_file, /*refresh_interval_sec=*/1);
  grpc::experimental::TlsServerCredentialsOptions options(provider);
  options.watch_identity_key_cert_pairs();
  options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  return grpc::experimental::TlsServerCredentials(options);
}

// The contexts of the internode links: none (in clear) unless
// tls.internode is on.
absl::StatusOr<InternodeTls> InternodeTlsOf(const LoadedConfig& config) {
  if (!config.tls_internode) return InternodeTls{};
  auto loaded = InternodeTls::Load(*config.tls_files);
  if (!loaded.ok()) return absl::FailedPreconditionError(absl::StrCat("tls: ", loaded.status().message()));
  return loaded;
}

std::unique_ptr<grpc::Server> Listen(const std::string& address, grpc::Service* service,
                                     std::shared_ptr<grpc::ServerCredentials> credentials) {
  grpc::ServerBuilder builder;
  // Without this a second process could bind the same port (SO_REUSEPORT).
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // Peers ping every second to notice a dead node; a stream that carries
  // nothing back must not be cut for that ("too many pings").
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 500);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddListeningPort(address, std::move(credentials));
  builder.RegisterService(service);
  return builder.BuildAndStart();
}

std::string Labels(NodeId node, ShardId shard) {
  return absl::StrCat("{node=\"", node, "\",shard=\"", shard, "\"}");
}

// Prometheus text: one series per shard (labels node and shard).
std::string RenderMetrics(NodeId id, const std::vector<MetricsSnapshot>& snapshots) {
  std::string text;
  if (!snapshots.empty()) {
    for (size_t i = 0; i < snapshots[0].counters.size(); i++) {
      const std::string& name = snapshots[0].counters[i].first;
      absl::StrAppend(&text, "# TYPE ", name, " counter\n");
      for (ShardId shard = 0; shard < snapshots.size(); shard++) {
        if (i >= snapshots[shard].counters.size()) continue;
        absl::StrAppend(&text, name, Labels(id, shard), " ", snapshots[shard].counters[i].second, "\n");
      }
    }
    for (size_t i = 0; i < snapshots[0].histograms.size(); i++) {
      const std::string& name = snapshots[0].histograms[i].first;
      absl::StrAppend(&text, "# HELP ", name, " microseconds\n# TYPE ", name, " summary\n");
      for (ShardId shard = 0; shard < snapshots.size(); shard++) {
        if (i >= snapshots[shard].histograms.size()) continue;
        const Histogram& histogram = snapshots[shard].histograms[i].second;
        const std::string base = absl::StrCat("node=\"", id, "\",shard=\"", shard, "\"");
        for (double quantile : {0.5, 0.99}) {
          absl::StrAppend(&text, name, "{", base, ",quantile=\"", quantile, "\"} ",
                          histogram.count() == 0 ? 0 : histogram.Percentile(quantile * 100), "\n");
        }
        absl::StrAppend(&text, name, "_sum{", base, "} ", histogram.sum(), "\n");
        absl::StrAppend(&text, name, "_count{", base, "} ", histogram.count(), "\n");
      }
    }
  }
  return text;
}

}  // namespace

Node::Node(LoadedConfig config) : config_(std::move(config)) {}

absl::StatusOr<std::unique_ptr<Node>> Node::Start(LoadedConfig config) {
  std::unique_ptr<Node> node(new Node(std::move(config)));
  const absl::Status opened = node->Open();
  if (!opened.ok()) return opened;
  return node;
}

// Each shard's thread and RocksDB, on WAL files preallocated with their
// size set (sized_wal_fs.h), and on the power-loss journal when the config
// asks for it.
absl::Status Node::OpenShardStorage(const std::string& directory, std::vector<ShardThread*>& threads) {
  std::shared_ptr<rocksdb::FileSystem> files = std::make_shared<SizedWalFileSystem>(rocksdb::FileSystem::Default());
  if (config_.file.power_loss_journal()) {
    auto journal = JournalingFileSystem::Open(PowerLossJournalPath(directory), files);
    if (!journal.ok()) return journal.status();
    files = *journal;
  }
  storage_env_ = rocksdb::NewCompositeEnv(files);
  std::random_device entropy;  // a real node is not a replay
  shards_.resize(config_.node.shards);
  for (ShardId shard = 0; shard < config_.node.shards; shard++) {
    ShardParts& parts = shards_[shard];
    parts.thread = std::make_unique<ShardThread>(absl::StrCat("shard-", shard));
    threads.push_back(parts.thread.get());
    const std::string shard_directory = (fs::path(directory) / absl::StrCat("shard-", shard)).string();
    auto storage =
        RocksDbStorage::Open(shard_directory, parts.thread.get(), config_.file.commitlog_sync(),
                             storage_env_.get());
    if (!storage.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "data_directory: cannot open ", shard_directory, " (in use by another process?): ",
          storage.status().message()));
    }
    parts.storage = std::move(*storage);
    parts.random = Random((uint64_t{entropy()} << 32) | entropy());
  }
  return absl::OkStatus();
}

absl::Status Node::Open() {
  const NodeConfig& node = config_.node;
  const std::string& directory = config_.file.data_directory();
  if (absl::Status claimed = ClaimDataDirectory(directory, node.id); !claimed.ok()) return claimed;

  std::vector<ShardThread*> threads;
  if (absl::Status opened = OpenShardStorage(directory, threads); !opened.ok()) return opened;
  absl::StatusOr<InternodeTls> tls = InternodeTlsOf(config_);
  if (!tls.ok()) return tls.status();
  auto transport = Transport::Create(node.id, config_.peer_internode_addresses, threads, *std::move(tls));
  if (!transport.ok()) return transport.status();
  transport_ = std::move(*transport);
  for (ShardId shard = 0; shard < node.shards; shard++) {
    ShardParts& parts = shards_[shard];
    ShardEnv env;
    env.self = Address{node.id, shard};
    env.clock = parts.thread.get();
    env.network = transport_->network(shard);
    env.storage = parts.storage.get();
    env.random = &parts.random;
    env.buggify = &buggify_;
    env.reactor = parts.thread.get();
    parts.shard = std::make_unique<Shard>(env, config_.node);
  }
  schema_ = shards_[0].shard->SchemaNow();
  shards_[0].shard->SetSchemaListener([this](const SchemaSnapshot& schema) {
    std::lock_guard<std::mutex> lock(schema_mutex_);
    schema_ = schema;
  });
  // The shards run before anyone can ask them anything (Status waits on
  // shard 0), and stop in Shutdown whatever fails next.
  for (ShardParts& parts : shards_) parts.thread->Start();
  for (ShardParts& parts : shards_) {
    Shard* shard = parts.shard.get();
    parts.thread->Post([shard] { shard->Start(); });
  }

  if (absl::Status listening = transport_->Listen(config_.internode_address); !listening.ok()) return listening;
  // Before the client API listens: whoever sees it answer (ctl cluster up
  // waits for a Status) may send requests at once.
  transport_->AcceptClients();
  client_service_ = std::make_unique<ClientService>(*this);
  client_server_ = Listen(config_.client_address, client_service_.get(), ClientApiCredentials(config_));
  if (client_server_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("client_address: cannot listen on ", config_.client_address, " (port in use?)"));
  }
  if (!config_.metrics_address.empty()) {
    auto metrics = MetricsServer::Start(config_.metrics_address, [this] { return MetricsText(); });
    if (!metrics.ok()) return metrics.status();
    metrics_server_ = std::move(*metrics);
  }

  if (absl::Status cql = StartCql(); !cql.ok()) return cql;
  for (const Exposure& exposure : ExposuresOf(config_)) {
    Log("warning", exposure.event,
        {{"node", absl::StrCat(config_.node.id)}, {"address", exposure.address}, {"why", exposure.why},
         {"fix", exposure.fix}});
  }
  return absl::OkStatus();
}

absl::Status Node::StartCql() {
  if (config_.cql_address.empty()) return absl::OkStatus();
  auto cql = CqlServer::Start(config_.cql_address, static_cast<uint16_t>(config_.file.cql_shard_aware_port()), *this);
  if (!cql.ok()) return cql.status();
  {
    std::lock_guard<std::mutex> lock(cql_server_mutex_);
    cql_server_ = std::move(*cql);
  }
  return absl::OkStatus();
}

Node::~Node() { Shutdown(); }

void Node::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  // CQL drivers see their connections close, and go to other nodes.
  std::unique_ptr<CqlServer> cql_server;
  {
    std::lock_guard<std::mutex> lock(cql_server_mutex_);
    cql_server = std::move(cql_server_);
  }
  cql_server.reset();
  if (transport_ != nullptr) {
    // No request gets in after this, so the drain below is complete.
    transport_->RefuseClients();
    // In-flight requests end by themselves within their timeout.
    const Nanos longest = std::max(config_.node.coordinator.write_timeout,
                                   config_.node.coordinator.read_timeout);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(longest);
    while (transport_->waiting_clients() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ClientResponse failed;
    failed.set_code(ClientResponse::WRITE_TIMEOUT);
    failed.set_message("the node shut down before the request finished: the outcome is unknown");
    transport_->FailWaitingClients(failed);
  }
  const auto started = std::chrono::steady_clock::now();
  auto phase = [&](const char* what) {
    const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    Log("debug", what, {{"node", absl::StrCat(config_.node.id)}, {"ms", absl::StrCat(elapsed.count())}});
  };
  phase("drained");
  const auto soon = std::chrono::system_clock::now() + std::chrono::milliseconds(200);
  if (client_server_ != nullptr) client_server_->Shutdown(soon);
  phase("servers_stopped");
  metrics_server_.reset();
  phase("metrics_stopped");
  if (transport_ != nullptr) transport_->Stop();
  phase("transport_stopped");
  for (ShardParts& parts : shards_) {
    if (parts.thread != nullptr) parts.thread->Stop();
  }
  // The shards go before their storage, which closes RocksDB.
  for (ShardParts& parts : shards_) parts.shard.reset();
  for (ShardParts& parts : shards_) parts.storage.reset();
}

void Node::CheckClientCall(std::string peer, std::optional<auth::Credentials> credentials, CallNeeds needs,
                           std::function<void(grpc::Status)> done) {
  CHARYBDIS_ASSERT(config_.cql_auth.required);
  std::lock_guard<std::mutex> lock(cql_server_mutex_);
  if (cql_server_ == nullptr) {
    return done(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the node is starting or shutting down"));
  }
  cql_server_->CheckClientCall(std::move(peer), std::move(credentials), std::move(needs), std::move(done));
}

void Node::FollowClientSchemaChange(std::string role, ClientRequest request, ClientResponse response,
                                    std::function<void(bool)> done) {
  CHARYBDIS_ASSERT(config_.cql_auth.required);
  std::lock_guard<std::mutex> lock(cql_server_mutex_);
  if (cql_server_ == nullptr) return done(false);
  cql_server_->FollowClientSchemaChange(std::move(role), std::move(request), std::move(response), std::move(done));
}

void Node::Execute(const ExecuteRequest& request, std::function<void(ClientResponse)> reply) {
  ClientResponse refused;
  refused.set_request_id(request.request().request_id());
  ShardId shard = 0;
  if (request.has_shard()) {
    if (request.shard() >= shards_.size()) {
      refused.set_code(ClientResponse::INVALID_REQUEST);
      refused.set_message(absl::StrCat("shard ", request.shard(), " does not exist: this node has ",
                                       shards_.size(), " shards"));
      return reply(std::move(refused));
    }
    shard = request.shard();
  } else {
    shard = static_cast<ShardId>(next_shard_++ % shards_.size());
  }
  if (!transport_->SubmitClientRequest(request.request(), shard, reply)) {
    refused.set_code(ClientResponse::UNAVAILABLE);
    refused.set_message("the node is starting or shutting down: nothing was done");
    reply(std::move(refused));
  }
}

SchemaSnapshot Node::Schema() const {
  std::lock_guard<std::mutex> lock(schema_mutex_);
  return schema_;
}

std::shared_ptr<const cql::Schema> Node::CqlSchema() const {
  std::lock_guard<std::mutex> lock(schema_mutex_);
  return schema_.schema;
}

void Node::Status(std::function<void(StatusResponse)> done) {
  auto status = std::make_shared<StatusResponse>();
  status->set_node_id(config_.node.id);
  status->set_shards(config_.node.shards);
  status->set_cql_open_to_everyone(CqlOpenToEveryone(config_));
  for (NodeId node : transport_->blocked()) status->add_blocked(node);
  for (const Member& member : config_.file.member()) *status->add_member() = member;
  uint64_t load_bytes = 0;
  for (const ShardParts& parts : shards_) load_bytes += parts.storage->LoadBytes();
  status->set_load_bytes(load_bytes);
  // Who is up is shard 0's to say; the answer goes out from its thread (or,
  // if the node stops first, without it, when the work is dropped).
  auto answer = std::make_shared<AnswerOnce<StatusResponse>>(std::move(done), *status);
  Shard* first = shards_[0].shard.get();
  const ReplicationConfig replication = config_.node.ring->layout().replication;
  shards_[0].thread->Post([first, status, answer, replication] {
    // The topology as shard 0's agent keeps it (core/topology/topology_agent.h),
    // and the ring of its owners now, as its data path routes by them.
    const topology::Topology& topology = first->topology_log().topology();
    status->set_topology_version(topology.version());
    if (const auto placement = first->PlacementFor(replication); placement.ok()) {
      const std::shared_ptr<const TokenRing>& owners = (*placement)->now();
      for (const auto& vnode : owners->tokens()) {
        RingEntry* entry = status->add_ring();
        entry->set_token(vnode.token);
        entry->set_node(vnode.node);
      }
      for (const auto& [id, share] : EffectiveOwnership(*owners)) (*status->mutable_effective_ownership())[id] = share;
    }
    std::set<NodeId> listed;
    for (const Member& member : status->member()) listed.insert(member.id());
    for (const auto& [id, member] : topology.members()) {
      (*status->mutable_member_state())[id] = topology::NodeStateName(member.state);
      (*status->mutable_host_id())[id] = cql::UuidText(HostIdOf(id));
      if (listed.count(id)) continue;
      Member& joined = *status->add_member();
      joined.set_id(id);
      joined.set_datacenter(member.datacenter);
      joined.set_rack(member.rack);
      joined.set_internode_address(member.address);
      joined.set_client_address(member.client_address);
      joined.set_cql_address(member.cql_address);
    }
    status->set_join_waiting_for(first->join_waiting_for());
    if (first->failure_detector() != nullptr) {
      for (NodeId node : first->failure_detector()->LiveNodes()) status->add_up(node);
    }
    const topology::OperationDriver::Progress driving = first->operation_progress();
    status->set_driving_version(driving.version);
    status->set_barrier_passed(driving.barrier_passed);
    status->set_streams(static_cast<uint32_t>(driving.streams));
    status->set_streams_done(static_cast<uint32_t>(driving.streams_done));
    status->set_pairs_streamed(driving.pairs);
    status->set_bytes_streamed(driving.bytes);
    status->set_estimated_ms_left(static_cast<uint64_t>(driving.estimated_left / kMillisecond));
    answer->Send(*status);
  });
}

void Node::Metrics(std::function<void(std::string)> done) {
  // Each shard snapshots itself on its own thread; the last one renders.
  struct Gathering {
    std::vector<MetricsSnapshot> snapshots;
    std::atomic<size_t> remaining;
  };
  auto gathering = std::make_shared<Gathering>();
  gathering->snapshots.resize(shards_.size());
  gathering->remaining = shards_.size();
  auto answer = std::make_shared<AnswerOnce<std::string>>(std::move(done), std::string());
  const NodeId id = config_.node.id;
  for (ShardId shard = 0; shard < shards_.size(); shard++) {
    Shard* core = shards_[shard].shard.get();
    const RocksDbStorage* storage = shards_[shard].storage.get();
    const Transport* transport = transport_.get();
    shards_[shard].thread->Post([core, storage, transport, shard, gathering, answer, id] {
      MetricsSnapshot& snapshot = gathering->snapshots[shard];
      snapshot.counters = core->metrics().Counters();
      // Group commit at work: synced writes per fsync.
      const LogWriter::SyncCounts syncs = storage->sync_counts();
      snapshot.counters.emplace_back("storage_synced_writes", syncs.synced_writes);
      snapshot.counters.emplace_back("storage_syncs", syncs.syncs);
      // Coalescing at work: messages to peers per socket write.
      const ShardLinks::Counts links = transport->link_counts(shard);
      snapshot.counters.emplace_back("internode_messages_sent", links.messages_sent);
      snapshot.counters.emplace_back("internode_socket_writes", links.socket_writes);
      for (const auto& [name, histogram] : core->metrics().Histograms()) {
        snapshot.histograms.emplace_back(name, *histogram);
      }
      if (--gathering->remaining == 0) answer->Send(RenderMetrics(id, gathering->snapshots));
    });
  }
}

std::string Node::MetricsText() {
  std::promise<std::string> text;
  std::future<std::string> rendered = text.get_future();
  Metrics([&text](std::string metrics) { text.set_value(std::move(metrics)); });
  return rendered.get();
}

}  // namespace charybdis::node
