#pragma once

#include <memory>
#include <vector>

#include "core/batchlog/batchlog.h"
#include "core/coordinator/coordinator.h"
#include "core/cluster/failure_detector.h"
#include "core/hints/hint_manager.h"
#include "core/cluster/liveness.h"
#include "core/telemetry/metrics.h"
#include "core/cluster/node_config.h"
#include "core/paxos/acceptor.h"
#include "core/read_cache/read_cache.h"
#include "core/repair/dropped_tables.h"
#include "core/repair/node_compaction.h"
#include "core/repair/node_repair.h"
#include "core/repair/range_repair.h"
#include "core/repair/repair_answerer.h"
#include "core/repair/repair_history.h"
#include "core/repair/shard_compaction.h"
#include "core/replica/range_cleanup.h"
#include "core/replica/replica.h"
#include "core/replica/stream_jobs.h"
#include "core/schema/schema_agent.h"
#include "core/topology/barrier_answerer.h"
#include "core/topology/held_until_current.h"
#include "core/topology/join_starter.h"
#include "core/topology/node_cleanup.h"
#include "core/topology/operation_driver.h"
#include "core/topology/topology_agent.h"
#include "core/env/shard_env.h"
#include "core/telemetry/tracing.h"

namespace charybdis {

// What a node's CQL layer needs of its schema (a copy: the runtime may
// keep it on another thread).
struct SchemaSnapshot {
  std::shared_ptr<const cql::Schema> schema;
  uint64_t sequence = 0;
  std::string version;
  std::map<NodeId, std::string> peer_versions;  // as their heartbeats said
};

// One shard of a node: receives its messages and runs the services it owns
// (replica, coordinator, hints). Shard 0 also runs the failure detector and
// the schema and topology agents, and tells the other shards of the node who is up and
// what the schema log holds.
class Shard {
 public:
  // A node that hears no peer serves clients by the topology it loaded
  // after this long (docs/topology.md, "A node that starts").
  static constexpr Nanos kServeWithoutPeersAfter = 5 * kSecond;

  Shard(ShardEnv env, const NodeConfig& config);
  Shard(const Shard&) = delete;
  Shard& operator=(const Shard&) = delete;

  void Start();
  // Null on shards other than 0.
  const FailureDetector* failure_detector() const { return failure_detector_.get(); }
  // Who replicates what under `replication` in the shard's newest topology:
  // the placement its data path routes by (cached per version).
  absl::StatusOr<std::shared_ptr<const topology::Placement>> PlacementFor(const ReplicationConfig& replication) {
    return placements_.For(topology::PlacedBy{replication, replication});
  }
  // Shard 0: the operation this node drives, if any (operation_driver.h).
  topology::OperationDriver::Progress operation_progress() const { return operation_driver_->progress(); }
  // What this new node's join waits for (JoinStarter::waiting_for); empty
  // on a bootstrap member, and once the log holds the node. Shard 0 only.
  std::string join_waiting_for() const { return join_starter_ ? join_starter_->waiting_for() : std::string(); }
  const ShardMetrics& metrics() const { return metrics_; }
  const LivenessView& liveness() const { return liveness_; }
  const cql::SchemaLog& schema_log() const { return schema_log_; }
  // Shard 0's is kept by its topology agent, which tells the other shards
  // whenever it grows.
  const topology::TopologyLog& topology_log() const { return topology_log_; }
  // What this shard knows of the repairs of its tokens (docs/repair.md).
  const repair::RepairHistory& repair_history() const { return repair_history_; }
  // Shard 0: called (on this shard) whenever the schema or a peer's
  // version changes. Set before Start.
  void SetSchemaListener(std::function<void(const SchemaSnapshot&)> listener);
  SchemaSnapshot SchemaNow() const;

 private:
  void MakeShardZeroParts();
  void OnMessage(const Envelope& message);
  // Replica writes, reads and scans, the batch log, and their answers.
  void OnDataPathMessage(const Envelope& message);
  void OnTopologyMessage(const Envelope& message);
  void AnswerPing(const Envelope& message);
  void OnLiveNodes(const std::vector<NodeId>& live);
  void OnHeartbeat(const Envelope& message);
  // Other shards: shard 0's news of who is up.
  void OnLivenessUpdate(const Envelope& message);
  void OnClientRequest(const Envelope& message);
  // Shard 0: the log grew, or a peer's version changed.
  void OnSchemaChange();
  void OnSchemaUpdate(const SchemaUpdate& update);
  // Shard 0: a client's ALTER KEYSPACE that changes a replication begins
  // the topology operation that moves its data (docs/topology.md).
  void BeginReplicationChange(const cql::SchemaLog::ReplicationChange& change, const cql::SchemaLogEntry& entry,
                              std::function<void(ClientResponse)> answer);
  // Shard 0: the topology log was loaded or grew.
  void OnTopologyChange();
  // Shard 0: tells the other shards the topology log, and whether it is
  // current.
  void TellShardsTopology();
  void LearnMembersAddresses();
  void ServeOnceCurrent();
  // The storage tables the ring places, each with its replication now (the
  // config's tables are placed as the cluster): what cleanup and repair
  // go through.
  std::map<std::string, ReplicationConfig> TablesPlacedNow() const;
  // The storage tables a `ctl compact` names: the config's, and the CQL
  // tables of the schema (not the logs', which never delete).
  std::vector<std::string> TablesToCompact(const CompactOp& request) const;
  // When a table's deletions may be purged (docs/repair.md): the config's
  // or the CQL schema's setting; never for other tables.
  TombstoneGc GcOf(const std::string& table) const;
  // PurgeBefore for a token of a table: by its GC, this node's clock, and
  // the newest repair that covered the token at the topology held now (a
  // repair at another topology may not have compared the replicas now).
  Timestamp PurgeHorizonOf(const std::string& table, Token token) const;
  // PurgeHorizonOf, for the parts that read and purge.
  PurgeHorizon PurgeHorizonFunction();
  // Repair's messages (core/repair/).
  void OnRepairMessage(const Envelope& message);

  // Before the read cache, which counts into them.
  ShardMetrics metrics_;
  // The read cache wraps the world's storage, and tracing wraps the
  // world's network and the cache (all before env_, which points at the
  // wrappers): a traced read served from memory shows as a storage read.
  ReadCache read_cache_;
  Tracer tracer_;
  TracingNetwork traced_network_;
  TracingStorage traced_storage_;
  ShardEnv env_;
  const NodeConfig& config_;
  LivenessView liveness_;
  cql::SchemaLog schema_log_;
  topology::TopologyLog topology_log_;
  topology::Placements placements_;  // of topology_log_
  Acceptor acceptor_;
  // The oldest topology version a routed write may carry here; raised by
  // the barrier (core/topology/barrier_answerer.h), 0 after a restart.
  uint64_t topology_fence_ = 0;
  // Shard 0: the last update sent; other shards: the last one applied.
  uint64_t liveness_version_ = 0;
  // Shard 0: the schema log's length the other shards were last sent.
  uint64_t shards_told_sequence_ = 0;
  Replica replica_;
  StreamJobs stream_jobs_;
  RangeCleanup range_cleanup_;
  repair::RepairAnswerer repair_answerer_;
  repair::RepairHistory repair_history_;
  repair::ShardCompaction shard_compaction_;
  repair::DroppedTables dropped_tables_;
  repair::RangeRepair range_repair_;
  HintManager hints_;
  Coordinator coordinator_;
  // Client requests wait here until the shard's topology is current.
  topology::HeldUntilCurrent held_until_current_;
  std::unique_ptr<FailureDetector> failure_detector_;
  std::unique_ptr<SchemaAgent> schema_agent_;
  std::unique_ptr<topology::TopologyAgent> topology_agent_;
  std::unique_ptr<topology::OperationDriver> operation_driver_;  // shard 0 only
  std::unique_ptr<topology::BarrierAnswerer> barrier_answerer_;
  std::unique_ptr<topology::JoinStarter> join_starter_;  // shard 0 of a new node only
  std::unique_ptr<Batchlog> batchlog_;  // shard 0 only
  std::unique_ptr<topology::NodeCleanup> node_cleanup_;  // shard 0 only
  std::unique_ptr<repair::NodeRepair> node_repair_;      // shard 0 only
  std::unique_ptr<repair::NodeCompaction> node_compaction_;  // shard 0 only
  std::function<void(const SchemaSnapshot&)> schema_listener_;
};

}  // namespace charybdis
