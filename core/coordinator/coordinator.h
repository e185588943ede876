#pragma once

#include <deque>
#include <map>
#include <memory>
#include <utility>

#include "core/coordinator/batch_handler.h"
#include "core/coordinator/held_for_schema.h"
#include "core/request/consistency.h"
#include "core/request/context.h"
#include "core/schema/schema_log.h"
#include "core/request/pending_request.h"
#include "core/coordinator/scan_handler.h"
#include "core/data/partition.h"
#include "core/paxos/lwt_queue.h"

namespace charybdis {

// The coordinator side of the data path on one shard (ScyllaDB's
// storage_proxy): takes client requests, checks them, forwards them to the
// shard that owns their token, and runs each as a WriteHandler or a
// ReadExecutor (a ScanHandler for scans), to which it routes the
// replicas' answers.
class Coordinator {
 public:
  // `schema_log`: the CQL tables (and the log's own), which change with
  // DDL; the config's tables do not.
  // `placements`: who replicates what, at the shard's topology version.
  Coordinator(ShardEnv env, const NodeConfig& config, const cql::SchemaLog& schema_log,
              topology::Placements& placements, LivenessView& liveness, ShardMetrics& metrics, HintManager& hints);
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  void OnClientRequest(const Envelope& message);
  // The shard's schema log took new entries.
  void OnSchemaUpdated();
  // The shard's topology log grew: fenced writes waiting for it run again.
  void OnTopologyChanged();
  void OnWriteAck(const Envelope& message);
  void OnReadResponse(const Envelope& message);
  void OnScanResponse(const Envelope& message);
  // Writes a mutation at `level` (Unavailable when too few replicas are
  // up): a client's write, a batch's part, or a batch log's replay.
  void RunMutation(PartitionData mutation, Timestamp timestamp, ConsistencyLevel level,
                   std::function<void(ClientResponse)> reply) {
    RunWrite(std::move(mutation), timestamp, level, /*replay=*/false, std::move(reply));
  }
  // A batch log's replay of a mutation, as RunMutation: its replicas drop
  // what it carries from before their purge horizon (docs/repair.md,
  // "Replays past the horizon").
  void ReplayMutation(PartitionData mutation, Timestamp timestamp, ConsistencyLevel level,
                      std::function<void(ClientResponse)> reply) {
    RunWrite(std::move(mutation), timestamp, level, /*replay=*/true, std::move(reply));
  }
  // A Paxos round among participants the caller chose (LwtQueue::RunAmong):
  // the topology log's.
  void RunPaxosAmong(std::vector<NodeId> participants, CasOp cas, ReadOp read,
                     std::function<void(ClientResponse)> reply) {
    lwt_.RunAmong(std::move(participants), std::move(cas), std::move(read), std::move(reply));
  }
  // Finishes any unfinished Paxos round of a partition this shard owns
  // (a repair found one under its fence); `done` gets whether it could.
  void FinishRound(const std::string& table, const std::string& partition_key, std::function<void(bool ok)> done) {
    lwt_.FinishRound(TokenOf(partition_key), table, partition_key, std::move(done));
  }
  // Promises, accept replies and commit acknowledgements.
  void OnPaxosReply(const Envelope& message);

 private:
  // Runs a client request seen for the first time (or released).
  void Dispatch(const Envelope& message);
  // The request names a table this shard does not know.
  bool NamesUnknownTable(const ClientRequest& request) const;
  void Write(const Address& client, uint64_t client_request_id, const WriteOp& op);
  // Why a write is malformed, or "". REQUIRES: its table exists.
  std::string WriteProblem(const WriteOp& op) const;
  // Who a write goes to and what it waits for: the natural replicas and the
  // pending ones, block_for + pending (docs/topology.md). Refused when the
  // topology cannot place the table's replication.
  struct WritePlan {
    Requirement requirement;
    std::vector<NodeId> replicas;  // natural, then pending
    uint64_t topology_version = 0;  // of the placement: replicas fence older ones
    bool replay = false;  // a batch log's: marked so to its replicas
  };
  void RunWrite(PartitionData mutation, Timestamp timestamp, ConsistencyLevel level, bool replay,
                std::function<void(ClientResponse)> reply);
  absl::StatusOr<WritePlan> PlanWrite(const std::string& table, Token token, ConsistencyLevel level);
  // Unavailable when the plan was refused or too few of its replicas are up.
  std::optional<ClientResponse> UnavailableFor(const absl::StatusOr<WritePlan>& plan, ConsistencyLevel level) const;
  // A write once its table and its plan's live replicas are checked.
  void StartWrite(WritePlan plan, PartitionData mutation, Timestamp timestamp,
                  std::function<void(ClientResponse)> reply);
  // A request a replica refused as fenced runs again (`run`) once this
  // shard holds the topology of that fence (at once if it does), within
  // `wait`; else `behind` answers its client.
  void RunWhenTopologyReaches(uint64_t fence, Nanos wait, std::function<void()> run, std::function<void()> behind);
  // A fenced write: within the write timeout, else a write timeout (it may
  // have been applied).
  void RerunWriteWhenTopologyReaches(uint64_t fence, PartitionData mutation, Timestamp timestamp,
                                     ConsistencyLevel level, bool replay, std::function<void(ClientResponse)> reply);
  // Who replicates a table, at the shard's topology version.
  absl::StatusOr<std::shared_ptr<const topology::Placement>> PlacementOf(const std::string& table) const;
  void Batch(const Address& client, uint64_t client_request_id, const BatchOp& op);
  // Where a logged batch goes first (core/batchlog/batchlog.h).
  std::vector<NodeId> BatchlogNodes();
  void Read(const Address& client, uint64_t client_request_id, const ReadOp& op);
  // One read of `op`'s range, and more while one stops with no live row
  // (ReadOp.limit); `newest_before`: the newest timestamp earlier rounds read.
  void ReadRound(ReadOp op, Timestamp newest_before, std::function<void(ClientResponse)> reply);
  void Cas(const Address& client, uint64_t client_request_id, const CasOp& op);
  void Scan(const Address& client, uint64_t client_request_id, const ScanOp& op);
  // Why a conditional write is malformed, or "".
  std::string CasProblem(const CasOp& op) const;
  // The shard of this node that owns a partition.
  ShardId OwnerOf(const std::string& partition_key) const;
  // Returns true (and forwards) when `owner` is another shard of this node:
  // the one that owns the request's partition, or shard 0 for a schema
  // change.
  bool ForwardIfNotOwner(const Envelope& message, const Address& client, ShardId owner);
  void Reply(const Address& client, uint64_t client_request_id, ClientResponse response);
  void Reject(const Address& client, uint64_t client_request_id, ClientResponse::Code code,
              const std::string& why);
  absl::Status CheckTable(const std::string& table, const std::string& partition_key) const;
  // A table's columns, or null when there is no such table.
  const std::set<std::string>* ColumnsOf(const std::string& table) const;
  Timestamp NewTimestamp();
  // The mutation a write op describes, stamped with `timestamp`.
  Partition MutationOf(const WriteOp& op, Timestamp timestamp);
  // The cell a put writes: the one it names, or a list element this shard
  // names now (ColumnValue.place), at `list_position_us` of its clock.
  std::string CellNameOf(const ColumnValue& put, Timestamp list_position_us);
  // Live replicas that count for the level, in the order to read them.
  std::vector<NodeId> ReadTargets(const std::vector<NodeId>& replicas,
                                  const Requirement& requirement);
  void Track(uint64_t id, std::shared_ptr<PendingRequest> request);

  // True the first time a request is seen (networks and drivers may send
  // one twice; running a write twice would stamp it twice).
  bool FirstSight(const Address& client, uint64_t client_request_id);

  CoordinatorContext context_;
  const cql::SchemaLog& schema_log_;
  Timestamp last_timestamp_ = 0;
  // Client requests seen in the last kRememberRequests, and when.
  std::map<std::pair<Address, uint64_t>, Nanos> seen_requests_;
  std::deque<std::pair<Nanos, std::pair<Address, uint64_t>>> seen_order_;
  std::map<uint64_t, std::shared_ptr<PendingRequest>> pending_;
  // Conditional writes and serial reads (core/paxos/lwt_queue.h).
  LwtQueue lwt_;
  // Shards other than 0: requests that wait for this shard's schema.
  std::unique_ptr<HeldForSchema> held_for_schema_;
  // Fenced requests waiting for a newer topology, by a local id.
  struct Fenced {
    uint64_t fence = 0;
    std::function<void()> run;
    std::function<void()> behind;
  };
  std::map<uint64_t, Fenced> fenced_;
  uint64_t last_fenced_ = 0;
};

}  // namespace charybdis
