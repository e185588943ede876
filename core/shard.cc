#include "core/shard.h"

#include <limits>

#include "core/env/assert.h"
#include "core/env/buggify_actions.h"
#include "core/data/storage_codec.h"
#include "core/replica/stream_source.h"
#include "core/topology/placement.h"

namespace charybdis {

namespace {

// The environment with its network and storage replaced by the tracing
// wrappers.
ShardEnv Traced(ShardEnv env, Network& network, Storage& storage) {
  env.network = &network;
  env.storage = &storage;
  return env;
}

// The bootstrap topology (docs/topology.md): the config's members, each
// with its tokens on the config's ring, at version 1.
topology::Topology BootstrapTopologyOf(const NodeConfig& config) {
  std::vector<topology::Member> members = topology::MembersOfRing(*config.ring);
  for (topology::Member& member : members) {
    if (auto it = config.member_addresses.find(member.id); it != config.member_addresses.end()) {
      member.address = it->second;
    }
  }
  return topology::Topology::Bootstrap(std::move(members));
}

}  // namespace

Shard::Shard(ShardEnv env, const NodeConfig& config)
    : read_cache_(*env.storage, *env.reactor, config.read_cache_bytes, storage_codec::IsPartitionRange, metrics_,
                  *env.buggify, env.probes),
      tracer_(env.self, *env.clock),
      traced_network_(*env.network, tracer_),
      traced_storage_(read_cache_, tracer_),
      env_(Traced(env, traced_network_, traced_storage_)),
      config_(config),
      liveness_(env.clock->Now()),
      schema_log_(config.cql_bootstrap ? config.cql_bootstrap : std::make_shared<cql::Schema>(), config.ring),
      topology_log_(BootstrapTopologyOf(config)),
      placements_(topology_log_, config.ring->layout().shards_per_node),
      acceptor_(env_, metrics_, Acceptor::kDefaultMaxIdlePartitions,
                [this](const std::string& table, Token token) {
                  return repair_history_.RepairedAt(table, token).began_us;
                },
                PurgeHorizonFunction()),
      replica_(env_, metrics_, acceptor_, topology_fence_, PurgeHorizonFunction(),
               [this](const std::string& table, Token token) {
                 // `immediate` is for tables never deleted from: a replay
                 // there brings nothing back, and dropped it would be lost.
                 if (GcOf(table).mode == TombstoneGc::Mode::kImmediate) return std::numeric_limits<Timestamp>::min();
                 return PurgeHorizonOf(table, token);
               }),
      stream_jobs_(env_,
                   [this] {
                     // The config's tables, then the CQL ones and the schema log's.
                     std::vector<std::string> tables;
                     for (const auto& [table, schema] : config_.tables) tables.push_back(table);
                     for (const auto& [table, columns] : schema_log_.storage_tables()) tables.push_back(table);
                     return tables;
                   },
                   [this](const std::string& key, const std::string& stored, std::function<void(absl::Status)> done) {
                     acceptor_.MergeStreamed(key, stored, std::move(done));
                   },
                   metrics_),
      range_cleanup_(env_, topology_log_, [this] { return TablesPlacedNow(); },
                     [this] { return stream_jobs_.busy(); }, metrics_),
      repair_answerer_(env_, metrics_,
                       PurgeHorizonFunction()),
      repair_history_(env_),
      shard_compaction_(
          env_, [this](const CompactOp& request) { return TablesToCompact(request); },
          PurgeHorizonFunction(),
          [this](const std::string& table, const std::string& partition_key, std::function<void(bool)> done) {
            acceptor_.Purge(table, partition_key, std::move(done));
          },
          metrics_),
      dropped_tables_(env_, metrics_),
      range_repair_(env_, topology_log_, [this] { return TablesPlacedNow(); },
                    [this](const std::string& table, const std::string& partition_key, std::function<void(bool)> done) {
                      coordinator_.FinishRound(table, partition_key, std::move(done));
                    },
                    metrics_),
      hints_(env_, config, liveness_, metrics_,
             [this](NodeId node) {
               const topology::Member* member = topology_log_.topology().Find(node);
               return member != nullptr && member->state == topology::NodeState::kLeft;
             }),
      coordinator_(env_, config, schema_log_, placements_, liveness_, metrics_, hints_),
      held_until_current_([this](const Envelope& message) { coordinator_.OnClientRequest(message); }) {
  CHARYBDIS_ASSERT(env.self.node == config.id);
  CHARYBDIS_ASSERT(env.self.shard < config.shards);
  if (env.self.shard == 0) MakeShardZeroParts();
  barrier_answerer_ = std::make_unique<topology::BarrierAnswerer>(
      env_, config.shards, topology_log_, config.coordinator.write_timeout, topology_fence_,
      env.self.shard == 0 ? std::function<void()>([this] { topology_agent_->CatchUp(); }) : nullptr);
  env_.network->SetReceiver([this](const Envelope& message) { OnMessage(message); });
}

// The parts only shard 0 runs: the node's agents, its failure detector,
// its operation driver (and a new node's join starter) and its batch log.
void Shard::MakeShardZeroParts() {
  CHARYBDIS_ASSERT(env_.self.shard == 0);
  // The driver and the join starter append through the agent, and ask the
  // same view of who is up.
  const auto submit = [this](topology::Entry entry, std::function<void(ClientResponse)> answer) {
    topology_agent_->Submit(std::move(entry), std::move(answer));
  };
  const auto is_alive = [this](NodeId node) { return liveness_.IsUp(node); };
  schema_agent_ = std::make_unique<SchemaAgent>(
      env_, config_.shards, schema_log_, [this] { OnSchemaChange(); },
      [this](cql::SchemaLog::ReplicationChange change, cql::SchemaLogEntry entry, auto answer) {
        BeginReplicationChange(change, entry, std::move(answer));
      },
      [this] {
        const topology::Topology& topology = topology_log_.topology();
        return topology::OwnersPerDatacenter(topology, topology.OwnersNow());
      });
  failure_detector_ = std::make_unique<FailureDetector>(
      env_, config_.peers, config_.failure_detector,
      [this](const std::vector<NodeId>& live) { OnLiveNodes(live); },
      [this, address = AddressOfSelf(config_)](Heartbeat& heartbeat) {
        schema_agent_->Stamp(heartbeat);
        topology_agent_->Stamp(heartbeat);
        heartbeat.set_address(address);
      });
  topology_agent_ = std::make_unique<topology::TopologyAgent>(
      env_, topology_log_,
      [this](std::vector<NodeId> participants, CasOp cas, ReadOp read, std::function<void(ClientResponse)> done) {
        coordinator_.RunPaxosAmong(std::move(participants), std::move(cas), std::move(read), std::move(done));
      },
      [this] { return schema_log_.Replications(); }, [this] { OnTopologyChange(); });
  operation_driver_ = std::make_unique<topology::OperationDriver>(
      env_, config_.ring->layout().shards_per_node, topology_log_, [this] { return schema_log_.Replications(); },
      submit,
      [this](std::string statement, std::function<void(ClientResponse)> answer) {
        schema_agent_->Submit(cql::SchemaLogEntry{"", std::move(statement)}, std::move(answer));
      },
      [this](NodeId node) { return failure_detector_->HeldDown(node); });
  if (config_.new_node) {
    join_starter_ = std::make_unique<topology::JoinStarter>(
        env_, config_, topology_log_, [this] { return schema_agent_->HoldsPeersLog(); }, is_alive, submit);
  }
  const auto current = [this] { return held_until_current_.current() && topology_agent_->HoldsPeersLog(); };
  node_cleanup_ = std::make_unique<topology::NodeCleanup>(env_, config_.shards, topology_log_, current);
  node_repair_ = std::make_unique<repair::NodeRepair>(
      env_, config_.shards, topology_log_, [this] { return TablesPlacedNow(); }, current);
  node_compaction_ = std::make_unique<repair::NodeCompaction>(
      env_, config_.shards, [this](const CompactOp& request) { return TablesToCompact(request); },
      config_.compaction_interval);
  batchlog_ = std::make_unique<Batchlog>(
      env_, config_, metrics_,
      [this](PartitionData mutation, Timestamp timestamp, ConsistencyLevel level, Batchlog::Reply reply) {
        coordinator_.ReplayMutation(std::move(mutation), timestamp, level, std::move(reply));
      });
}

void Shard::Start() {
  acceptor_.Start();
  hints_.Start();
  repair_history_.Start([this] { acceptor_.OnRepairHistoryLoaded(); });
  if (failure_detector_) failure_detector_->Start();
  if (schema_agent_) schema_agent_->Start();
  if (topology_agent_) topology_agent_->Start();
  if (batchlog_) batchlog_->Start();
  if (node_compaction_) node_compaction_->Start();
  if (join_starter_) join_starter_->Start();
  if (env_.self.shard == 0) {
    // No peer heard for this long (all down, or cut off): serve by the log
    // as loaded rather than not at all; a quorum needs the peers anyway.
    env_.clock->After(kServeWithoutPeersAfter, [this] {
      if (held_until_current_.current()) return;
      CHARYBDIS_PROBE(env_.probes, "topology.serving_without_peers");
      held_until_current_.BecomeCurrent();
      TellShardsTopology();
    });
  }
}

void Shard::SetSchemaListener(std::function<void(const SchemaSnapshot&)> listener) {
  CHARYBDIS_ASSERT(env_.self.shard == 0);
  schema_listener_ = std::move(listener);
}

SchemaSnapshot Shard::SchemaNow() const {
  SchemaSnapshot snapshot{schema_log_.schema(), schema_log_.sequence(), schema_log_.version(), {}};
  if (schema_agent_) snapshot.peer_versions = schema_agent_->peer_versions();
  return snapshot;
}

void Shard::OnSchemaChange() {
  CHARYBDIS_ASSERT(env_.self.shard == 0);
  if (schema_log_.sequence() > shards_told_sequence_) {
    // The whole log each time: a late update is a prefix of a newer one.
    Envelope update;
    *update.mutable_schema_update() = EntriesOf(schema_log_);
    for (ShardId shard = 1; shard < config_.shards; shard++) {
      SendPerhapsLate(env_, "shard.schema_update_late", Address{env_.self.node, shard}, update);
    }
    shards_told_sequence_ = schema_log_.sequence();
  }
  dropped_tables_.Reclaim(schema_log_.dropped_storage_tables());
  if (schema_listener_) schema_listener_(SchemaNow());
}

void Shard::TellShardsTopology() {
  CHARYBDIS_ASSERT(env_.self.shard == 0);
  Envelope update;
  *update.mutable_topology_update() = topology::CopyOf(topology_log_);
  update.mutable_topology_update()->set_current(held_until_current_.current());
  for (ShardId shard = 1; shard < config_.shards; shard++) {
    SendPerhapsLate(env_, "shard.topology_update_late", Address{env_.self.node, shard}, update);
  }
}

// Shard 0 serves clients once its log is as long as its peers' (or it has
// no peer: a cluster of one), then tells the other shards that they may.
void Shard::ServeOnceCurrent() {
  CHARYBDIS_ASSERT(env_.self.shard == 0);
  if (held_until_current_.current()) return;
  bool alone = true;
  for (const auto& [id, member] : topology_log_.topology().members()) {
    if (id != env_.self.node && member.state != topology::NodeState::kLeft) alone = false;
  }
  if (!topology_agent_->HoldsPeersLog() && !(alone && topology_agent_->loaded())) return;
  held_until_current_.BecomeCurrent();
  TellShardsTopology();
}

// Every shard reaches each member at the address its log gives.
void Shard::LearnMembersAddresses() {
  for (const auto& [id, member] : topology_log_.topology().members()) {
    if (id != env_.self.node && !member.address.empty()) env_.network->LearnAddress(id, member.address);
  }
}

void Shard::OnTopologyChange() {
  CHARYBDIS_ASSERT(env_.self.shard == 0);
  LearnMembersAddresses();
  TellShardsTopology();
  ServeOnceCurrent();
  // Heartbeat every member the log holds, not only the bootstrap ones
  // (a member that left is let be: it will not be back under its id).
  for (const auto& [id, member] : topology_log_.topology().members()) {
    if (id != env_.self.node && member.state != topology::NodeState::kLeft) failure_detector_->AddPeer(id);
  }
  operation_driver_->OnTopologyChange();
  barrier_answerer_->OnTopologyChange();
  coordinator_.OnTopologyChanged();
}

void Shard::BeginReplicationChange(const cql::SchemaLog::ReplicationChange& change,
                                   const cql::SchemaLogEntry& entry, std::function<void(ClientResponse)> answer) {
  CHARYBDIS_ASSERT(env_.self.shard == 0);
  topology::Entry begin;
  begin.kind = topology::Entry::Kind::kBegin;
  begin.operation = topology::Operation::kReplicate;
  begin.node = env_.self.node;
  begin.driver = env_.self.node;
  // From the schema's replication; the topology agent makes it the
  // topology's when it proposes the change.
  begin.replicating = {change.now.keyspace, change.now.keyspace_created_at, change.now.replication, change.to,
                       entry.statement};
  topology_agent_->Submit(std::move(begin), [this, keyspace = change.now.keyspace,
                                             answer = std::move(answer)](ClientResponse begun) mutable {
    if (begun.code() != ClientResponse::OK) return answer(std::move(begun));  // refused: one at a time, or too few owners
    operation_driver_->WhenDone(keyspace, begun.topology_version(), [this, answer](ClientResponse done) {
      if (done.code() == ClientResponse::OK) {
        done.set_schema_sequence(schema_log_.sequence());
        done.set_schema_version(schema_log_.version());
      }
      answer(std::move(done));
    });
  });
}

void Shard::OnSchemaUpdate(const SchemaUpdate& update) {
  CHARYBDIS_ASSERT(env_.self.shard != 0);
  AppendNewEntries(update, schema_log_);
  coordinator_.OnSchemaUpdated();
  dropped_tables_.Reclaim(schema_log_.dropped_storage_tables());
}

void Shard::OnClientRequest(const Envelope& message) {
  // Shard 0 runs schema and topology changes; the coordinators of the
  // others forward them here.
  if (schema_agent_ && message.client_request().has_schema_change()) return schema_agent_->OnRequest(message);
  if (topology_agent_ && message.client_request().has_topology_change()) {
    return topology_agent_->OnRequest(message);
  }
  if (node_cleanup_ && message.client_request().has_cleanup()) return node_cleanup_->OnRequest(message);
  if (node_repair_ && message.client_request().has_repair()) return node_repair_->OnRequest(message);
  if (node_compaction_ && message.client_request().has_compact()) return node_compaction_->OnRequest(message);
  held_until_current_.Take(message);
}

void Shard::OnLiveNodes(const std::vector<NodeId>& live) {
  CHARYBDIS_ASSERT(env_.self.shard == 0);
  liveness_version_++;
  for (ShardId shard = 1; shard < config_.shards; shard++) {
    Envelope update;
    for (NodeId node : live) update.mutable_liveness()->add_up(node);
    update.mutable_liveness()->set_version(liveness_version_);
    // Views are versioned: a late update is dropped for a newer one.
    SendPerhapsLate(env_, "shard.liveness_update_late", Address{env_.self.node, shard}, std::move(update));
  }
  for (NodeId node : liveness_.Update(live, env_.clock->Now())) hints_.OnTargetUp(node);
}

void Shard::OnHeartbeat(const Envelope& message) {
  // Heartbeats go to shard 0 only; anything else is a sender bug.
  CHARYBDIS_ASSERT(failure_detector_ != nullptr);
  // Before the detector answers a stranger: the answer goes there.
  if (!message.heartbeat().address().empty()) {
    env_.network->LearnAddress(message.from_node(), message.heartbeat().address());
  }
  failure_detector_->OnHeartbeat(message.from_node(), message.heartbeat());
  schema_agent_->OnPeerSchema(message.from_node(), message.heartbeat().schema_sequence(),
                              message.heartbeat().schema_version());
  topology_agent_->OnPeerTopology(message.from_node(), message.heartbeat().topology_sequence());
  ServeOnceCurrent();
}

void Shard::OnLivenessUpdate(const Envelope& message) {
  CHARYBDIS_ASSERT(message.from_node() == env_.self.node);
  if (message.liveness().version() <= liveness_version_) return;  // overtaken
  liveness_version_ = message.liveness().version();
  const std::vector<NodeId> live(message.liveness().up().begin(), message.liveness().up().end());
  for (NodeId node : liveness_.Update(live, env_.clock->Now())) hints_.OnTargetUp(node);
}

void Shard::OnMessage(const Envelope& message) {
  CHARYBDIS_ASSERT(message.to_node() == env_.self.node);
  CHARYBDIS_ASSERT(message.to_shard() == env_.self.shard);
  switch (message.body_case()) {
    case Envelope::kHeartbeat:
      OnHeartbeat(message);
      return;
    case Envelope::kLiveness:
      OnLivenessUpdate(message);
      return;
    case Envelope::kPing:
      AnswerPing(message);
      return;
    case Envelope::kClientRequest:
      OnClientRequest(message);
      return;
    case Envelope::kClientResponse:
      // Only the schema agent asks this node's coordinators.
      CHARYBDIS_ASSERT(schema_agent_ != nullptr);
      schema_agent_->OnResponse(message.client_response());
      return;
    case Envelope::kSchemaUpdate:
      CHARYBDIS_ASSERT(message.from_node() == env_.self.node);
      OnSchemaUpdate(message.schema_update());
      return;
    case Envelope::kTopologyUpdate:
      CHARYBDIS_ASSERT(message.from_node() == env_.self.node && env_.self.shard != 0);
      topology::AppendNewEntries(message.topology_update(), topology_log_);
      LearnMembersAddresses();
      if (message.topology_update().current()) held_until_current_.BecomeCurrent();
      barrier_answerer_->OnTopologyChange();
      coordinator_.OnTopologyChanged();
      return;
    case Envelope::kPaxosPrepare:
      if (!replica_.RefusedPaxos(message)) acceptor_.OnPrepare(message);
      return;
    case Envelope::kPaxosAccept:
      if (!replica_.RefusedPaxos(message)) acceptor_.OnAccept(message);
      return;
    case Envelope::kPaxosCommit:
      acceptor_.OnCommit(message);
      return;
    case Envelope::kPaxosPrune:
      acceptor_.OnPrune(message);
      return;
    case Envelope::kPaxosPromise:
    case Envelope::kPaxosAcceptReply:
    case Envelope::kPaxosCommitAck:
      coordinator_.OnPaxosReply(message);
      return;
    default:
      return OnDataPathMessage(message);
  }
}

void Shard::OnDataPathMessage(const Envelope& message) {
  switch (message.body_case()) {
    case Envelope::kReplicaWrite:
      replica_.OnWrite(message);
      return;
    case Envelope::kReplicaRead:
      replica_.OnRead(message);
      return;
    case Envelope::kBatchlogStore:
      CHARYBDIS_ASSERT(batchlog_ != nullptr);  // coordinators send to shard 0
      batchlog_->OnStore(message);
      return;
    case Envelope::kBatchlogRemove:
      CHARYBDIS_ASSERT(batchlog_ != nullptr);
      batchlog_->OnRemove(message);
      return;
    case Envelope::kReplicaScan:
      replica_.OnScan(message);
      return;
    case Envelope::kReplicaScanResponse:
      coordinator_.OnScanResponse(message);
      return;
    case Envelope::kStreamRequest: {
      StreamedPaxosView paxos_view;
      if (acceptor_.Ready()) {
        paxos_view = [this](const std::string& table, const std::string& key, const std::string& stored) {
          return acceptor_.StreamedView(table, key, stored);
        };
      }
      AnswerStreamRequest(env_, message, paxos_view);
      return;
    }
    case Envelope::kStreamRanges:
      stream_jobs_.OnRequest(message);
      return;
    case Envelope::kStreamChunk:
      stream_jobs_.OnChunk(message.stream_chunk());
      return;
    case Envelope::kReplicaWriteAck:
      if (HintManager::IsHintRequest(message.replica_write_ack().request_id())) {
        hints_.OnAck(message.from_node(), message.replica_write_ack().request_id(),
                     message.replica_write_ack().ok());
      } else {
        coordinator_.OnWriteAck(message);
      }
      return;
    case Envelope::kReplicaReadResponse:
      coordinator_.OnReadResponse(message);
      return;
    default:
      return OnTopologyMessage(message);
  }
}

// The topology log's copies, barriers and stream answers.
void Shard::OnTopologyMessage(const Envelope& message) {
  switch (message.body_case()) {
    case Envelope::kTopologyLogRequest:
      // Heartbeats, and so these, go to shard 0 only.
      CHARYBDIS_ASSERT(topology_agent_ != nullptr);
      topology_agent_->OnLogRequest(message);
      return;
    case Envelope::kTopologyLog:
      CHARYBDIS_ASSERT(topology_agent_ != nullptr);
      topology_agent_->OnLogCopy(message);
      return;
    case Envelope::kTopologyBarrier:
      barrier_answerer_->OnBarrier(message);
      return;
    case Envelope::kShardCleanup:
      range_cleanup_.OnRequest(message);
      return;
    case Envelope::kShardCleanupDone:
      CHARYBDIS_ASSERT(node_cleanup_ != nullptr);  // shard 0 asks
      node_cleanup_->OnShardDone(message);
      return;
    case Envelope::kTopologyBarrierDone:
      // From another shard of this node to shard 0's answerer, else from
      // a member to this node's driver.
      if (message.from_node() == env_.self.node && message.from_shard() != 0) {
        barrier_answerer_->OnShardDone(message);
      } else {
        CHARYBDIS_ASSERT(operation_driver_ != nullptr);
        operation_driver_->OnBarrierDone(message);
      }
      return;
    case Envelope::kStreamRangesDone:
      CHARYBDIS_ASSERT(operation_driver_ != nullptr);  // only drivers ask, from shard 0
      operation_driver_->OnStreamDone(message);
      return;
    default:
      return OnRepairMessage(message);
  }
}

void Shard::OnRepairMessage(const Envelope& message) {
  switch (message.body_case()) {
    case Envelope::kShardRepair:
      return range_repair_.OnRequest(message);
    case Envelope::kShardRepairDone:
      CHARYBDIS_ASSERT(node_repair_ != nullptr);  // shard 0 asks
      return node_repair_->OnShardDone(message);
    case Envelope::kRepairHashRequest:
      return repair_answerer_.OnHashRequest(message);
    case Envelope::kRepairHashes:
      return range_repair_.OnHashes(message);
    case Envelope::kRepairFetch:
      return repair_answerer_.OnFetch(message);
    case Envelope::kRepairRows:
      return range_repair_.OnRows(message);
    case Envelope::kRepairPush:
      return repair_answerer_.OnPush(message);
    case Envelope::kRepairPushAck:
      return range_repair_.OnPushAck(message);
    case Envelope::kRepairRecord:
      return repair_history_.OnRecord(message);
    case Envelope::kRepairRecordAck:
      return range_repair_.OnRecordAck(message);
    case Envelope::kPaxosFence:
      return acceptor_.OnFence(message);
    case Envelope::kPaxosFenced:
      return range_repair_.OnFenced(message);
    case Envelope::kShardCompact:
      return shard_compaction_.OnRequest(message);
    case Envelope::kShardCompactDone:
      CHARYBDIS_ASSERT(node_compaction_ != nullptr);  // shard 0 asks
      return node_compaction_->OnShardDone(message);
    default:
      CHARYBDIS_ASSERT(false && "shard received a message it does not serve");
  }
}

std::vector<std::string> Shard::TablesToCompact(const CompactOp& request) const {
  RepairOp named;
  named.set_keyspace(request.keyspace());
  named.set_table(request.table());
  std::map<std::string, ReplicationConfig> all;  // the names, for repair's filter
  for (const auto& [table, schema] : config_.tables) all.emplace(table, ReplicationConfig());
  for (const auto& [name, table] : schema_log_.schema()->tables()) all.emplace(table.storage, ReplicationConfig());
  std::vector<std::string> tables;
  for (const auto& [table, unused] : repair::TablesToRepair(all, named)) tables.push_back(table);
  return tables;
}

TombstoneGc Shard::GcOf(const std::string& table) const {
  if (auto config = config_.tables.find(table); config != config_.tables.end()) return config->second.gc;
  for (const auto& [name, described] : schema_log_.schema()->tables()) {
    if (described.storage == table) return described.gc;
  }
  TombstoneGc never;
  never.mode = TombstoneGc::Mode::kDisabled;
  return never;
}

Timestamp Shard::PurgeHorizonOf(const std::string& table, Token token) const {
  const TombstoneGc gc = GcOf(table);
  Timestamp repaired_us = 0;
  // Only `repair` mode reads the history (every read asks).
  if (gc.mode == TombstoneGc::Mode::kRepair) {
    const repair::RepairHistory::Repaired repaired = repair_history_.RepairedAt(table, token);
    if (repaired.topology_version == topology_log_.topology().version()) repaired_us = repaired.began_us;
  }
  return PurgeBefore(gc, env_.clock->Now() / kMicrosecond, repaired_us);
}

PurgeHorizon Shard::PurgeHorizonFunction() {
  return [this](const std::string& table, Token token) { return PurgeHorizonOf(table, token); };
}

std::map<std::string, ReplicationConfig> Shard::TablesPlacedNow() const {
  std::map<std::string, ReplicationConfig> tables;
  for (const auto& [table, replication] : schema_log_.TablesPlacedByToken()) {
    tables.emplace(table, topology::PlacedByOf(topology_log_.topology(), replication).now);
  }
  for (const auto& [table, schema] : config_.tables) {
    tables.emplace(table, schema_log_.ReplicationOf(table).replication);
  }
  return tables;
}

void Shard::AnswerPing(const Envelope& message) {
  Envelope reply;
  Pong* pong = reply.mutable_pong();
  pong->set_request_id(message.ping().request_id());
  pong->set_payload(message.ping().payload());
  env_.network->Send(Address{message.from_node(), message.from_shard()}, std::move(reply));
}

}  // namespace charybdis
