#include "core/coordinator/coordinator.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "core/env/client_address.h"
#include "core/env/buggify_actions.h"
#include "core/coordinator/read_executor.h"
#include "core/coordinator/write_handler.h"

namespace charybdis {

Coordinator::Coordinator(ShardEnv env, const NodeConfig& config, const cql::SchemaLog& schema_log,
                         topology::Placements& placements, LivenessView& liveness, ShardMetrics& metrics,
                         HintManager& hints)
    : context_{.env = env,
               .config = config,
               .liveness = liveness,
               .metrics = metrics,
               .hints = hints,
               .placements = placements,
               .local_datacenter = DatacenterOfSelf(config),
               // 31 random bits: the top bit marks hint replays (HintManager).
               .request_id_base = (env.random->Next() >> 33) << 32,
               .last_request_id = 0,
               .track = nullptr,
               .forget = nullptr,
               .finish_paxos = nullptr},
      schema_log_(schema_log),
      // Drawn after the request ids: the order of a shard's draws is part of its replay.
      lwt_(context_, schema_log, BallotClock(env.self, env.random->Next() >> (64 - BallotLayout::kNonceBits))) {
  context_.track = [this](uint64_t id, std::shared_ptr<PendingRequest> request) {
    Track(id, std::move(request));
  };
  context_.forget = [this](uint64_t id) { pending_.erase(id); };
  if (env.self.shard != 0) {
    held_for_schema_ = std::make_unique<HeldForSchema>(env, [this](const Envelope& message) { Dispatch(message); });
  }
  // A plain read that meets an unfinished Paxos round finishes it first.
  context_.finish_paxos = [this](Token token, const std::string& table, const std::string& key,
                                 std::function<void(bool)> done) {
    lwt_.FinishRound(token, table, key, std::move(done));
  };
  // The low 32 bits count this life's requests; the top bit marks hint replays.
  CHARYBDIS_ASSERT((context_.request_id_base & 0xffffffffu) == 0);
  CHARYBDIS_ASSERT((context_.request_id_base >> 63) == 0);
  CHARYBDIS_ASSERT(context_.last_request_id == 0);
  CHARYBDIS_ASSERT(context_.env.self.shard < config.shards);
}

namespace {

constexpr Nanos kRememberRequests = 60 * kSecond;

// What a write names that its table does not have ("" if nothing): each
// cell's column (a collection's element belongs to its column) must be
// one of `columns`; a list's appends and a collection set whole name the
// column itself.
std::string UnknownColumn(const WriteOp& op, const std::set<std::string>& columns) {
  const auto problem_of = [&](const std::string& name) -> std::string {
    if (IsWellFormedCellName(name) && columns.count(std::string(ColumnOfCell(name))) > 0) return "";
    return absl::StrCat("unknown column \"", name, "\"");
  };
  for (const ColumnValue& put : op.put()) {
    if (std::string problem = problem_of(put.column()); !problem.empty()) return problem;
    if (!ColumnValue::Place_IsValid(put.place())) return "unknown list element place";
    if (put.place() != ColumnValue::NAMED && IsElementCell(put.column())) {
      return absl::StrCat("a list element added at an end names its list, not \"", put.column(), "\"");
    }
  }
  for (const std::string& column : op.delete_column()) {
    if (std::string problem = problem_of(column); !problem.empty()) return problem;
  }
  for (const std::string& column : op.clear_collection()) {
    if (IsElementCell(column)) return absl::StrCat("a collection set whole names its column, not \"", column, "\"");
    if (std::string problem = problem_of(column); !problem.empty()) return problem;
  }
  return "";
}

// The largest limit a read that reads on past dead rows grows to
// (ReadRound), unless it asked for more.
constexpr uint32_t kMaxReadLimit = 1 << 16;

// In an order drawn from the shard's generator (Fisher-Yates).
void Shuffle(std::vector<NodeId>& nodes, Random& random) {
  for (size_t i = nodes.size(); i > 1; i--) std::swap(nodes[i - 1], nodes[random.Below(i)]);
}

}  // namespace

bool Coordinator::FirstSight(const Address& client, uint64_t client_request_id) {
  const Nanos now = context_.env.clock->Now();
  while (!seen_order_.empty() && now - seen_order_.front().first > kRememberRequests) {
    seen_requests_.erase(seen_order_.front().second);
    seen_order_.pop_front();
  }
  CHARYBDIS_ASSERT(seen_requests_.size() == seen_order_.size());
  const std::pair<Address, uint64_t> key{client, client_request_id};
  if (!seen_requests_.emplace(key, now).second) return false;
  seen_order_.emplace_back(now, key);
  CHARYBDIS_ASSERT(seen_requests_.size() == seen_order_.size());
  return true;
}

void Coordinator::OnClientRequest(const Envelope& message) {
  const ClientRequest& request = message.client_request();
  const Address client = ClientAddressOf(message);
  // A forward comes once, from our own node; duplicates come from outside.
  if (!request.forwarded() && !FirstSight(client, request.request_id())) return;
  if (held_for_schema_ != nullptr && NamesUnknownTable(request)) return held_for_schema_->Hold(message);
  Dispatch(message);
}

void Coordinator::OnSchemaUpdated() {
  if (held_for_schema_ == nullptr) return;
  held_for_schema_->ReleaseKnown([this](const ClientRequest& request) { return !NamesUnknownTable(request); });
}

bool Coordinator::NamesUnknownTable(const ClientRequest& request) const {
  std::vector<const std::string*> tables;
  switch (request.op_case()) {
    case ClientRequest::kWrite: tables.push_back(&request.write().table()); break;
    case ClientRequest::kRead: tables.push_back(&request.read().table()); break;
    case ClientRequest::kScan: tables.push_back(&request.scan().table()); break;
    case ClientRequest::kCas:
      for (const CasStatement& statement : request.cas().statement()) tables.push_back(&statement.write().table());
      break;
    case ClientRequest::kBatch:
      for (const WriteOp& write : request.batch().write()) tables.push_back(&write.table());
      break;
    default: break;
  }
  for (const std::string* table : tables) {
    if (ColumnsOf(*table) == nullptr) return true;
  }
  return false;
}

void Coordinator::Dispatch(const Envelope& message) {
  const ClientRequest& request = message.client_request();
  const Address client = ClientAddressOf(message);
  switch (request.op_case()) {
    case ClientRequest::kWrite: {
      const absl::Status table = CheckTable(request.write().table(), request.write().partition_key());
      if (!table.ok()) return Reject(client, request.request_id(), ClientResponse::INVALID_REQUEST, std::string(table.message()));
      CHARYBDIS_ASSERT(!request.write().partition_key().empty());
      if (ForwardIfNotOwner(message, client, OwnerOf(request.write().partition_key()))) return;
      return Write(client, request.request_id(), request.write());
    }
    case ClientRequest::kRead: {
      const absl::Status table = CheckTable(request.read().table(), request.read().partition_key());
      if (!table.ok()) return Reject(client, request.request_id(), ClientResponse::INVALID_REQUEST, std::string(table.message()));
      CHARYBDIS_ASSERT(!request.read().partition_key().empty());
      if (ForwardIfNotOwner(message, client, OwnerOf(request.read().partition_key()))) return;
      return Read(client, request.request_id(), request.read());
    }
    case ClientRequest::kCas: {
      const std::string problem = CasProblem(request.cas());
      if (!problem.empty()) {
        return Reject(client, request.request_id(), ClientResponse::INVALID_REQUEST, problem);
      }
      CHARYBDIS_ASSERT(request.cas().statement_size() >= 1);
      const Token token = TokenOf(request.cas().statement(0).write().partition_key());
      if (ForwardIfNotOwner(message, client, ShardOf(token, context_.config.shards))) return;
      return Cas(client, request.request_id(), request.cas());
    }
    case ClientRequest::kBatch:
      // Any shard coordinates a batch: its partitions may be anyone's.
      return Batch(client, request.request_id(), request.batch());
    case ClientRequest::kScan:
      // Any shard coordinates a scan: its ranges span every shard.
      if (ColumnsOf(request.scan().table()) == nullptr) {
        return Reject(client, request.request_id(), ClientResponse::INVALID_REQUEST,
                      absl::StrCat("unknown table \"", request.scan().table(), "\""));
      }
      return Scan(client, request.request_id(), request.scan());
    case ClientRequest::kSchemaChange:
    case ClientRequest::kTopologyChange:
    case ClientRequest::kCleanup:
    case ClientRequest::kRepair:
    case ClientRequest::kCompact:
      // Shard 0's schema and topology agents, its cleanup and its repair
      // run these (core/schema/schema_agent.h, core/topology/topology_agent.h,
      // node_cleanup.h, core/repair/node_repair.h); shard 0 hands them over
      // before they reach its coordinator.
      CHARYBDIS_ASSERT(context_.env.self.shard != 0);
      if (ForwardIfNotOwner(message, client, 0)) return;
      break;
    case ClientRequest::OP_NOT_SET:
      break;
  }
  Reject(client, request.request_id(), ClientResponse::INVALID_REQUEST, "the request has no operation");
}

const std::set<std::string>* Coordinator::ColumnsOf(const std::string& table) const {
  if (auto it = context_.config.tables.find(table); it != context_.config.tables.end()) return &it->second.columns;
  const auto& cql_tables = schema_log_.storage_tables();
  auto it = cql_tables.find(table);
  return it == cql_tables.end() ? nullptr : &it->second;
}

absl::Status Coordinator::CheckTable(const std::string& table, const std::string& partition_key) const {
  if (ColumnsOf(table) == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("unknown table \"", table, "\""));
  }
  if (partition_key.empty()) return absl::InvalidArgumentError("the partition key may not be empty");
  CHARYBDIS_ASSERT(ColumnsOf(table) != nullptr);
  return absl::OkStatus();
}

ShardId Coordinator::OwnerOf(const std::string& partition_key) const {
  CHARYBDIS_ASSERT(context_.config.shards >= 1);
  return ShardOf(TokenOf(partition_key), context_.config.shards);
}

bool Coordinator::ForwardIfNotOwner(const Envelope& message, const Address& client, ShardId owner) {
  CHARYBDIS_ASSERT(owner < context_.config.shards);
  if (owner == context_.env.self.shard) return false;
  if (message.client_request().forwarded()) {
    // Only a shard forwards, once, to the owner: this came from elsewhere,
    // so its reply address cannot be trusted; answer the sender.
    Reject(Address{message.from_node(), message.from_shard()},
           message.client_request().request_id(), ClientResponse::INVALID_REQUEST,
           "a forwarded request reached a shard that does not own it");
    return true;
  }
  context_.metrics.cross_shard_ops++;
  Envelope forward;
  ClientRequest* request = forward.mutable_client_request();
  *request = message.client_request();
  request->set_forwarded(true);
  request->set_reply_node(client.node);
  request->set_reply_shard(client.shard);
  SendPerhapsLate(context_.env, "coordinator.forward_late", Address{context_.env.self.node, owner},
                  std::move(forward));
  return true;
}

void Coordinator::Reply(const Address& client, uint64_t client_request_id, ClientResponse response) {
  response.set_request_id(client_request_id);
  response.set_coordinator_life(context_.request_id_base >> 32);
  Envelope message;
  *message.mutable_client_response() = std::move(response);
  SendPerhapsTwice(context_.env, "coordinator.reply_duplicate", client, std::move(message));
}

void Coordinator::Reject(const Address& client, uint64_t client_request_id,
                         ClientResponse::Code code, const std::string& why) {
  CHARYBDIS_ASSERT(code != ClientResponse::OK);
  CHARYBDIS_ASSERT(!why.empty());
  if (code == ClientResponse::INVALID_REQUEST) context_.metrics.invalid_requests++;
  ClientResponse response;
  response.set_code(code);
  response.set_message(why);
  Reply(client, client_request_id, std::move(response));
}

Timestamp Coordinator::NewTimestamp() {
  // Strictly increasing on this shard even if the clock steps back.
  const Timestamp previous = last_timestamp_;
  last_timestamp_ = std::max(last_timestamp_ + 1, context_.env.clock->Now() / kMicrosecond);
  CHARYBDIS_ASSERT(last_timestamp_ > previous);
  CHARYBDIS_ASSERT(last_timestamp_ > 0);
  return last_timestamp_;
}

Partition Coordinator::MutationOf(const WriteOp& op, Timestamp timestamp) {
  CHARYBDIS_ASSERT(timestamp > 0);  // negative ones are refused, zero ones drawn
  Partition mutation;
  if (op.delete_range()) {
    mutation.range_tombstones[ClusteringRange{op.range_start(), op.range_end()}] = timestamp;
    return mutation;  // WriteProblem refused anything beside it
  }
  Row& row = mutation.rows[op.clustering_key()];
  if (op.delete_row()) row.tombstone = timestamp;
  const Timestamp now_us = context_.env.clock->Now() / kMicrosecond;
  // Before the puts: a collection set whole puts elements of it.
  for (const std::string& column : op.clear_collection()) {
    row.cells[column] = Cell{timestamp - 1, true, "", 0, 0};
  }
  // A list's new elements take one position, read once from this shard's
  // clock; their ids keep their order.
  const bool places_list_elements = std::any_of(op.put().begin(), op.put().end(),
                                                [](const ColumnValue& put) { return put.place() != ColumnValue::NAMED; });
  const Timestamp list_position_us = places_list_elements ? NewTimestamp() : 0;
  for (const ColumnValue& put : op.put()) {
    row.cells[CellNameOf(put, list_position_us)] = LiveCell(put.value(), timestamp, op.ttl_seconds(), now_us);
  }
  for (const std::string& column : op.delete_column()) {
    row.cells[column] = Cell{timestamp, true, "", 0, 0};
  }
  CHARYBDIS_ASSERT(mutation.rows.size() == 1);
  return mutation;
}

std::string Coordinator::CellNameOf(const ColumnValue& put, Timestamp list_position_us) {
  if (put.place() == ColumnValue::NAMED) return put.column();
  // Placed by this shard's clock, not the write's timestamp (a client's,
  // perhaps old), as Cassandra places them by its coordinator's time; and
  // unique: this shard's node and shard, and an id it never gives twice.
  CHARYBDIS_ASSERT(list_position_us > 0);
  const uint64_t origin = (uint64_t{context_.env.self.node} << 16) | context_.env.self.shard;
  const Timestamp position = put.place() == ColumnValue::APPEND ? list_position_us : -list_position_us;
  return ElementCellName(put.column(), ListElementPath(position, origin, context_.NextRequestId()));
}

std::string Coordinator::WriteProblem(const WriteOp& op) const {
  CHARYBDIS_ASSERT(ColumnsOf(op.table()) != nullptr);
  const std::set<std::string>& columns = *ColumnsOf(op.table());
  std::string problem;
  if (absl::Status valid = ValidForWrite(op.consistency()); !valid.ok()) problem = std::string(valid.message());
  if (op.put_size() == 0 && op.delete_column_size() == 0 && op.clear_collection_size() == 0 && !op.delete_row() &&
      !op.delete_range()) {
    problem = "the write puts and deletes nothing";
  }
  if (op.delete_range() &&
      (op.put_size() > 0 || op.delete_column_size() > 0 || op.clear_collection_size() > 0 || op.delete_row())) {
    problem = "a range deletion deletes its range and nothing else";
  }
  if (op.delete_range() && ClusteringRange{op.range_start(), op.range_end()}.empty()) {
    problem = "a range deletion's range is empty (its end is not after its start)";
  }
  if (std::string unknown = UnknownColumn(op, columns); !unknown.empty()) problem = std::move(unknown);
  if (op.timestamp() < 0) problem = "timestamps may not be negative";
  return problem;
}

void Coordinator::Write(const Address& client, uint64_t client_request_id, const WriteOp& op) {
  // OnClientRequest hands a write to the shard that owns its partition.
  CHARYBDIS_ASSERT(OwnerOf(op.partition_key()) == context_.env.self.shard);
  if (const std::string problem = WriteProblem(op); !problem.empty()) {
    return Reject(client, client_request_id, ClientResponse::INVALID_REQUEST, problem);
  }
  context_.metrics.coordinator_writes++;
  // Checked before the timestamp is drawn: a refused write draws none.
  absl::StatusOr<WritePlan> plan = PlanWrite(op.table(), TokenOf(op.partition_key()), op.consistency());
  if (std::optional<ClientResponse> unavailable = UnavailableFor(plan, op.consistency())) {
    context_.metrics.write_unavailable++;
    return Reply(client, client_request_id, *std::move(unavailable));
  }
  const Timestamp timestamp = op.timestamp() != 0 ? op.timestamp() : NewTimestamp();
  PartitionData mutation;
  mutation.set_table(op.table());
  mutation.set_partition_key(op.partition_key());
  CHARYBDIS_ASSERT(timestamp > 0);
  MutationOf(op, timestamp).ToProto(&mutation);
  StartWrite(*std::move(plan), std::move(mutation), timestamp, [this, client, client_request_id](ClientResponse response) {
    Reply(client, client_request_id, std::move(response));
  });
}

absl::StatusOr<std::shared_ptr<const topology::Placement>> Coordinator::PlacementOf(const std::string& table) const {
  return context_.placements.For(schema_log_.ReplicationOf(table));
}

absl::StatusOr<Coordinator::WritePlan> Coordinator::PlanWrite(const std::string& table, Token token,
                                                               ConsistencyLevel level) {
  absl::StatusOr<std::shared_ptr<const topology::Placement>> placement = PlacementOf(table);
  if (!placement.ok()) return placement.status();
  const topology::Placement::Replicas replicas = (*placement)->WriteReplicasOf(token);
  WritePlan plan{Requirement(level, (*placement)->now(), context_.local_datacenter), replicas.natural,
                 (*placement)->version()};
  if (!replicas.pending.empty()) {
    plan.requirement.AddPending(replicas.pending, (*placement)->after());
    plan.replicas.insert(plan.replicas.end(), replicas.pending.begin(), replicas.pending.end());
  }
  if (replicas.also_among_after) {
    plan.requirement.AlsoAmong((*placement)->after(), (*placement)->after()->ReplicasOf(token));
  }
  CHARYBDIS_ASSERT(plan.replicas.size() == replicas.natural.size() + replicas.pending.size());
  return plan;
}

std::optional<ClientResponse> Coordinator::UnavailableFor(const absl::StatusOr<WritePlan>& plan,
                                                          ConsistencyLevel level) const {
  if (!plan.ok()) return Unplaceable(level, plan.status());
  std::vector<NodeId> live;
  for (NodeId replica : plan->replicas) {
    if (context_.liveness.IsUp(replica)) live.push_back(replica);
  }
  CHARYBDIS_ASSERT(plan->requirement.blocked_for() >= 1);
  CHARYBDIS_ASSERT(live.size() <= plan->replicas.size());
  const bool hints_can_serve = level == CL_ANY && context_.config.coordinator.hinted_handoff;
  if (plan->requirement.SatisfiedBy(live) || hints_can_serve) return std::nullopt;
  if (const Requirement* after = plan->requirement.among_after(); after != nullptr) {
    const std::vector<NodeId> live_after = plan->requirement.AnsweredAfter(live);
    if (!after->SatisfiedBy(live_after)) {
      return Unavailable(level, after->Counted(live_after), after->blocked_for(),
                         "not enough live replicas among those a change of replication keeps");
    }
  }
  return Unavailable(level, plan->requirement.Counted(live), plan->requirement.blocked_for(),
                     "not enough live replicas");
}

void Coordinator::RunWrite(PartitionData mutation, Timestamp timestamp, ConsistencyLevel level, bool replay,
                           std::function<void(ClientResponse)> reply) {
  CHARYBDIS_ASSERT(reply != nullptr);
  if (ColumnsOf(mutation.table()) == nullptr) {  // a batch log's, of a table dropped since
    ClientResponse invalid;
    invalid.set_code(ClientResponse::INVALID_REQUEST);
    invalid.set_message(absl::StrCat("unknown table \"", mutation.table(), "\""));
    return reply(std::move(invalid));
  }
  context_.metrics.coordinator_writes++;
  absl::StatusOr<WritePlan> plan = PlanWrite(mutation.table(), TokenOf(mutation.partition_key()), level);
  if (std::optional<ClientResponse> unavailable = UnavailableFor(plan, level)) {
    context_.metrics.write_unavailable++;
    return reply(*std::move(unavailable));
  }
  plan->replay = replay;
  StartWrite(*std::move(plan), std::move(mutation), timestamp, std::move(reply));
}

void Coordinator::StartWrite(WritePlan plan, PartitionData mutation, Timestamp timestamp,
                             std::function<void(ClientResponse)> reply) {
  const Token token = TokenOf(mutation.partition_key());
  const uint64_t id = context_.NextRequestId();
  CHARYBDIS_ASSERT(id != 0);
  CHARYBDIS_ASSERT(!plan.replicas.empty());
  auto handler = std::make_shared<WriteHandler>(
      context_, id, std::move(plan.requirement), token, std::move(plan.replicas), plan.topology_version,
      plan.replay, std::move(mutation), timestamp, std::move(reply), [this, id] { pending_.erase(id); },
      [this, replay = plan.replay](uint64_t fence, PartitionData fenced, Timestamp fenced_timestamp,
                                   ConsistencyLevel level, std::function<void(ClientResponse)> fenced_reply) {
        RerunWriteWhenTopologyReaches(fence, std::move(fenced), fenced_timestamp, level, replay,
                                      std::move(fenced_reply));
      });
  Track(id, handler);
  CHARYBDIS_ASSERT(pending_.count(id) == 1);
  handler->Start();
}

void Coordinator::RunWhenTopologyReaches(uint64_t fence, Nanos wait, std::function<void()> run,
                                         std::function<void()> behind) {
  if (context_.placements.topology().version() >= fence) return run();
  // Shard 0 learns the newer log from its peers' heartbeats and tells this
  // shard (OnTopologyChanged).
  const uint64_t id = ++last_fenced_;
  fenced_.emplace(id, Fenced{fence, std::move(run), std::move(behind)});
  context_.env.clock->After(wait, [this, id] {
    auto it = fenced_.find(id);
    if (it == fenced_.end()) return;  // ran again
    std::function<void()> behind = std::move(it->second.behind);
    fenced_.erase(it);
    behind();
  });
}

void Coordinator::RerunWriteWhenTopologyReaches(uint64_t fence, PartitionData mutation, Timestamp timestamp,
                                                ConsistencyLevel level, bool replay,
                                                std::function<void(ClientResponse)> reply) {
  auto shared_reply = std::make_shared<std::function<void(ClientResponse)>>(std::move(reply));
  // A write timeout: the first run may have reached replicas that took it.
  const auto may_have_been_applied = [this, level, shared_reply](std::string why) {
    ClientResponse response;
    response.set_code(ClientResponse::WRITE_TIMEOUT);
    response.set_consistency(level);
    response.set_write_type("SIMPLE");
    response.set_message(absl::StrCat(why, "; it may have been applied"));
    context_.metrics.write_timeouts++;
    (*shared_reply)(std::move(response));
  };
  RunWhenTopologyReaches(
      fence, context_.config.coordinator.write_timeout,
      [this, mutation = std::move(mutation), timestamp, level, replay, shared_reply, may_have_been_applied] {
        RunWrite(mutation, timestamp, level, replay, [this, shared_reply, may_have_been_applied](ClientResponse response) {
          // A rerun refused before it sent anything (Unavailable, a table
          // dropped) cannot say the write was not applied.
          if (response.code() == ClientResponse::OK || response.code() == ClientResponse::WRITE_TIMEOUT) {
            return (*shared_reply)(std::move(response));
          }
          CHARYBDIS_PROBE(context_.env.probes, "write.rerun_refused");
          may_have_been_applied(absl::StrCat(
              "a replica refused the write as fenced, and its run on the newer topology failed (", response.message(),
              ")"));
        });
      },
      [this, may_have_been_applied] {
        CHARYBDIS_PROBE(context_.env.probes, "write.fenced_and_behind");
        may_have_been_applied(
            "a replica refused the write, routed by a topology older than its fence, and this coordinator did not "
            "learn the newer one in time");
      });
}

void Coordinator::OnTopologyChanged() {
  const uint64_t version = context_.placements.topology().version();
  for (auto it = fenced_.begin(); it != fenced_.end();) {
    if (it->second.fence > version) {
      ++it;
      continue;
    }
    std::function<void()> run = std::move(it->second.run);
    it = fenced_.erase(it);
    run();
  }
}

std::vector<NodeId> Coordinator::ReadTargets(const std::vector<NodeId>& replicas,
                                             const Requirement& requirement) {
  // Like a snitch: this node first if it is a replica, then the other
  // replicas of this datacenter, then the rest; in random order within each
  // group (the shard's own generator), which spreads reads evenly.
  CHARYBDIS_ASSERT(!replicas.empty());
  std::vector<NodeId> local, remote;
  for (NodeId replica : replicas) {
    if (replica == context_.env.self.node || !context_.liveness.IsUp(replica) ||
        !requirement.Counts(replica)) {
      continue;
    }
    const bool same_dc = context_.placements.DatacenterOf(replica) == context_.local_datacenter;
    (same_dc ? local : remote).push_back(replica);
  }
  Shuffle(local, *context_.env.random);
  Shuffle(remote, *context_.env.random);
  CHARYBDIS_ASSERT(local.size() + remote.size() <= replicas.size());
  std::vector<NodeId> targets;
  const NodeId self = context_.env.self.node;
  if (std::find(replicas.begin(), replicas.end(), self) != replicas.end() &&
      context_.liveness.IsUp(self) && requirement.Counts(self)) {
    targets.push_back(self);
  }
  targets.insert(targets.end(), local.begin(), local.end());
  targets.insert(targets.end(), remote.begin(), remote.end());
  CHARYBDIS_ASSERT(targets.size() <= replicas.size());
  for (NodeId target : targets) CHARYBDIS_ASSERT(requirement.Counts(target));
  return targets;
}

void Coordinator::Read(const Address& client, uint64_t client_request_id, const ReadOp& op) {
  CHARYBDIS_ASSERT(OwnerOf(op.partition_key()) == context_.env.self.shard);
  if (absl::Status valid = ValidForRead(op.consistency()); !valid.ok()) {
    return Reject(client, client_request_id, ClientResponse::INVALID_REQUEST, std::string(valid.message()));
  }
  if (IsSerial(op.consistency())) {
    return lwt_.SerialRead(op, [this, client, client_request_id](ClientResponse response) {
      Reply(client, client_request_id, std::move(response));
    });
  }
  context_.metrics.coordinator_reads++;
  ReadRound(op, 0, [this, client, client_request_id](ClientResponse response) {
    Reply(client, client_request_id, std::move(response));
  });
}

void Coordinator::ReadRound(ReadOp op, Timestamp newest_before, std::function<void(ClientResponse)> reply) {
  CHARYBDIS_ASSERT(!IsSerial(op.consistency()));
  const Token token = TokenOf(op.partition_key());
  absl::StatusOr<std::shared_ptr<const topology::Placement>> placement = PlacementOf(op.table());
  if (!placement.ok()) {
    context_.metrics.read_unavailable++;
    return reply(Unplaceable(op.consistency(), placement.status()));
  }
  const std::shared_ptr<const TokenRing>& ring = (*placement)->reads();
  Requirement requirement(op.consistency(), ring, context_.local_datacenter);
  std::vector<NodeId> targets = ReadTargets(ring->ReplicasOf(token), requirement);
  if (targets.size() < requirement.blocked_for()) {
    context_.metrics.read_unavailable++;
    return reply(Unavailable(op.consistency(), static_cast<uint32_t>(targets.size()), requirement.blocked_for(),
                             "not enough live replicas"));
  }
  CHARYBDIS_ASSERT(targets.size() >= requirement.blocked_for());
  const uint64_t id = context_.NextRequestId();
  CHARYBDIS_ASSERT(id != 0);
  auto executor = std::make_shared<ReadExecutor>(
      context_, id, std::move(requirement), token, op, std::move(targets), (*placement)->version(),
      [this, op, newest_before, reply](ClientResponse response) mutable {
        response.set_newest_timestamp(std::max(response.newest_timestamp(), newest_before));
        if (response.code() != ClientResponse::OK || !response.read_cut() || response.rows_size() > 0) {
          return reply(std::move(response));
        }
        // It stopped at its limit with no live row: every row it read was
        // dead. Answered so, a page would be empty but say more follow,
        // and some drivers (the Python driver of Debian) take an empty
        // page for the end. It reads on from where it stopped instead,
        // with twice the limit, so a long run of dead rows takes few
        // rounds (Cassandra reads past them in one, up to its tombstone
        // thresholds).
        CHARYBDIS_PROBE(context_.env.probes, "read.dead_rows_read_past");
        CHARYBDIS_ASSERT(op.range() && op.limit() > 0);  // only those stop early
        op.set_start(response.read_through() + std::string(1, '\0'));
        op.set_limit(std::max(op.limit(), std::min<uint32_t>(op.limit(), kMaxReadLimit / 2) * 2));
        ReadRound(std::move(op), response.newest_timestamp(), std::move(reply));
      },
      [this](const std::vector<uint64_t>& ids) {
        for (uint64_t id : ids) pending_.erase(id);
      });
  Track(id, executor);
  executor->Start();
}

void Coordinator::Batch(const Address& client, uint64_t client_request_id, const BatchOp& op) {
  std::string problem = op.write_size() == 0 ? "a batch needs a write" : "";
  for (const WriteOp& given : op.write()) {
    WriteOp write = given;
    write.set_consistency(op.consistency());  // the batch's level is every write's
    const absl::Status table = CheckTable(write.table(), write.partition_key());
    if (problem.empty()) problem = table.ok() ? WriteProblem(write) : std::string(table.message());
  }
  if (!problem.empty()) return Reject(client, client_request_id, ClientResponse::INVALID_REQUEST, problem);
  CHARYBDIS_ASSERT(op.write_size() >= 1);
  // One timestamp for the writes that bring none, as Cassandra stamps a batch.
  const Timestamp timestamp = NewTimestamp();
  std::map<std::pair<std::string, std::string>, Partition> partitions;  // by table, partition key
  for (const WriteOp& write : op.write()) {
    partitions[{write.table(), write.partition_key()}].Merge(MutationOf(write, write.timestamp() != 0 ? write.timestamp() : timestamp));
  }
  CHARYBDIS_ASSERT(!partitions.empty());
  CHARYBDIS_ASSERT(partitions.size() <= static_cast<size_t>(op.write_size()));
  std::vector<PartitionData> mutations;
  for (const auto& [key, partition] : partitions) {
    // Refused before anything is logged or written, as Cassandra does.
    if (std::optional<ClientResponse> unavailable =
            UnavailableFor(PlanWrite(key.first, TokenOf(key.second), op.consistency()), op.consistency())) {
      context_.metrics.write_unavailable++;
      return Reply(client, client_request_id, *std::move(unavailable));
    }
    PartitionData& mutation = mutations.emplace_back();
    mutation.set_table(key.first);
    mutation.set_partition_key(key.second);
    partition.ToProto(&mutation);
  }
  CHARYBDIS_ASSERT(mutations.size() == partitions.size());
  std::vector<NodeId> log_nodes;
  if (op.logged() && mutations.size() > 1) log_nodes = BatchlogNodes();
  CHARYBDIS_ASSERT(log_nodes.size() <= 2);
  auto handler = std::make_shared<BatchHandler>(
      context_, std::move(mutations), timestamp, op.consistency(), std::move(log_nodes),
      [this](PartitionData mutation, Timestamp at, ConsistencyLevel level, BatchHandler::Reply reply) {
        RunMutation(std::move(mutation), at, level, std::move(reply));
      },
      [this, client, client_request_id](ClientResponse response) {
        Reply(client, client_request_id, std::move(response));
      },
      [this](const std::vector<uint64_t>& ids) {
        for (uint64_t id : ids) pending_.erase(id);
      });
  handler->Start();
}

std::vector<NodeId> Coordinator::BatchlogNodes() {
  // Cassandra's choice: two live nodes of this datacenter other than this
  // one (in random order), or this one when no other is up.
  std::vector<NodeId> candidates;
  for (const auto& [id, member] : context_.placements.topology().members()) {
    if (id != context_.env.self.node && member.datacenter == context_.local_datacenter &&
        member.state == topology::NodeState::kNormal && context_.liveness.IsUp(id)) {
      candidates.push_back(id);
    }
  }
  Shuffle(candidates, *context_.env.random);
  if (candidates.size() > 2) candidates.resize(2);
  if (candidates.empty()) candidates.push_back(context_.env.self.node);
  CHARYBDIS_ASSERT(!candidates.empty());
  CHARYBDIS_ASSERT(candidates.size() <= 2);
  return candidates;
}

void Coordinator::Scan(const Address& client, uint64_t client_request_id, const ScanOp& op) {
  if (absl::Status valid = ValidForRead(op.consistency()); !valid.ok() || IsSerial(op.consistency())) {
    return Reject(client, client_request_id, ClientResponse::INVALID_REQUEST,
                  valid.ok() ? "a scan cannot be SERIAL: Paxos runs per partition" : std::string(valid.message()));
  }
  const bool resumes_well = !op.resume() || (!op.after_partition_key().empty() &&
                                              TokenOf(op.after_partition_key()) == op.start_token());
  if (op.limit() == 0 || op.start_token() > op.end_token() || !resumes_well) {
    return Reject(client, client_request_id, ClientResponse::INVALID_REQUEST,
                  "a scan needs a limit and start_token <= end_token, and a resumed scan its row, of start_token");
  }
  CHARYBDIS_ASSERT(op.limit() >= 1);
  CHARYBDIS_ASSERT(op.start_token() <= op.end_token());
  CHARYBDIS_ASSERT(!IsSerial(op.consistency()));
  context_.metrics.coordinator_reads++;
  absl::StatusOr<std::shared_ptr<const topology::Placement>> placement = PlacementOf(op.table());
  if (!placement.ok()) {
    context_.metrics.read_unavailable++;
    return Reply(client, client_request_id, Unplaceable(op.consistency(), placement.status()));
  }
  std::shared_ptr<const TokenRing> ring = (*placement)->reads();
  CHARYBDIS_ASSERT(ring != nullptr);
  Requirement requirement(op.consistency(), ring, context_.local_datacenter);
  auto handler = std::make_shared<ScanHandler>(
      context_, std::move(ring), (*placement)->version(), requirement, op,
      [this, requirement](const std::vector<NodeId>& replicas) { return ReadTargets(replicas, requirement); },
      [this, client, client_request_id](ClientResponse response) {
        Reply(client, client_request_id, std::move(response));
      },
      [this, client, client_request_id, op](uint64_t fence) {
        RunWhenTopologyReaches(
            fence, context_.config.coordinator.read_timeout, [this, client, client_request_id, op] {
              Scan(client, client_request_id, op);
            },
            [this, client, client_request_id, level = op.consistency()] {
              CHARYBDIS_PROBE(context_.env.probes, "scan.fenced_and_behind");
              context_.metrics.read_timeouts++;
              ClientResponse response;
              response.set_code(ClientResponse::READ_TIMEOUT);
              response.set_consistency(level);
              response.set_message("a replica refused the scan, routed by a topology older than its fence, and "
                                   "this coordinator did not learn the newer one in time");
              Reply(client, client_request_id, std::move(response));
            });
      },
      [this](const std::vector<uint64_t>& ids) {
        for (uint64_t id : ids) pending_.erase(id);
      });
  handler->Start();
}

std::string Coordinator::CasProblem(const CasOp& op) const {
  if (op.statement_size() == 0) return "a conditional write needs a statement";
  const WriteOp& first = op.statement(0).write();
  if (absl::Status table = CheckTable(first.table(), first.partition_key()); !table.ok()) {
    return std::string(table.message());
  }
  CHARYBDIS_ASSERT(ColumnsOf(first.table()) != nullptr);
  const std::set<std::string>& columns = *ColumnsOf(first.table());
  for (const CasStatement& statement : op.statement()) {
    const WriteOp& write = statement.write();
    if (write.table() != first.table()) return "a conditional batch must stay in one table";
    if (write.partition_key() != first.partition_key()) {
      return "a conditional batch must stay in one partition";
    }
    if (statement.if_exists() && statement.if_not_exists()) return "IF EXISTS and IF NOT EXISTS together";
    // As in Cassandra: a condition is on one row, which a range is not.
    if (write.delete_range()) return "a conditional write cannot delete a range of rows";
    if (write.put_size() == 0 && write.delete_column_size() == 0 && write.clear_collection_size() == 0 &&
        !write.delete_row()) {
      return "a statement puts and deletes nothing";
    }
    if (write.timestamp() != 0) return "a conditional write takes its timestamp from its ballot";
    if (std::string unknown = UnknownColumn(write, columns); !unknown.empty()) return unknown;
    for (const Condition& condition : statement.condition()) {
      if (!IsWellFormedCellName(condition.column()) || !columns.count(std::string(ColumnOfCell(condition.column())))) {
        return absl::StrCat("unknown column \"", condition.column(), "\" in a condition");
      }
      if (!Condition::Op_IsValid(condition.op())) return "unknown condition operator";
      if (!Condition::Compared_IsValid(condition.compared())) return "unknown condition comparison";
      if (condition.compared() != Condition::CELL &&
          (IsElementCell(condition.column()) || (condition.op() != Condition::EQ && condition.op() != Condition::NE))) {
        return "a condition on a collection's elements names its column and compares with = or != only";
      }
    }
  }
  const ConsistencyLevel serial = op.serial_consistency();
  if (serial != CL_UNSET && !IsSerial(serial)) {
    return absl::StrCat(ConsistencyName(serial), " is not a serial consistency level (SERIAL or LOCAL_SERIAL)");
  }
  const ConsistencyLevel commit = op.commit_consistency();
  if (IsSerial(commit)) {
    return absl::StrCat(ConsistencyName(commit), " is not a commit consistency level");
  }
  if (commit != CL_UNSET) {
    if (absl::Status valid = ValidForWrite(commit); !valid.ok()) return std::string(valid.message());
  }
  return "";
}

void Coordinator::Cas(const Address& client, uint64_t client_request_id, const CasOp& op) {
  CHARYBDIS_ASSERT(op.statement_size() >= 1);
  CHARYBDIS_ASSERT(OwnerOf(op.statement(0).write().partition_key()) == context_.env.self.shard);
  lwt_.Cas(op, [this, client, client_request_id](ClientResponse response) {
    Reply(client, client_request_id, std::move(response));
  });
}

void Coordinator::OnPaxosReply(const Envelope& message) {
  uint64_t id = 0;
  switch (message.body_case()) {
    case Envelope::kPaxosPromise: id = message.paxos_promise().request_id(); break;
    case Envelope::kPaxosAcceptReply: id = message.paxos_accept_reply().request_id(); break;
    case Envelope::kPaxosCommitAck: id = message.paxos_commit_ack().request_id(); break;
    default: CHARYBDIS_ASSERT(false && "not a Paxos reply");
  }
  auto it = pending_.find(id);
  if (it == pending_.end()) return;  // late: that round is over
  std::shared_ptr<PendingRequest> request = it->second;
  CHARYBDIS_ASSERT(request != nullptr);  // Track admits no null
  switch (message.body_case()) {
    case Envelope::kPaxosPromise: return request->OnPromise(message.from_node(), message.paxos_promise());
    case Envelope::kPaxosAcceptReply:
      return request->OnAcceptReply(message.from_node(), message.paxos_accept_reply());
    default: return request->OnCommitAck(message.from_node(), message.paxos_commit_ack());
  }
}

void Coordinator::Track(uint64_t id, std::shared_ptr<PendingRequest> request) {
  CHARYBDIS_ASSERT(request != nullptr);
  const bool inserted = pending_.emplace(id, std::move(request)).second;
  CHARYBDIS_ASSERT(inserted);
}

void Coordinator::OnWriteAck(const Envelope& message) {
  const ReplicaWriteAck& ack = message.replica_write_ack();
  auto it = pending_.find(ack.request_id());
  if (it == pending_.end()) return;  // late: the request is over
  // Keep the request alive through the call even if it finishes.
  std::shared_ptr<PendingRequest> request = it->second;
  CHARYBDIS_ASSERT(request != nullptr);  // Track admits no null
  if (ack.fenced()) return request->OnWriteFenced(message.from_node(), ack.fence());
  request->OnWriteAck(message.from_node(), ack.ok());
}

void Coordinator::OnScanResponse(const Envelope& message) {
  auto it = pending_.find(message.replica_scan_response().request_id());
  if (it == pending_.end()) return;
  std::shared_ptr<PendingRequest> request = it->second;
  CHARYBDIS_ASSERT(request != nullptr);  // Track admits no null
  request->OnScanResponse(Address{message.from_node(), message.from_shard()}, message.replica_scan_response());
}

void Coordinator::OnReadResponse(const Envelope& message) {
  const ReplicaReadResponse& response = message.replica_read_response();
  auto it = pending_.find(response.request_id());
  if (it == pending_.end()) return;
  std::shared_ptr<PendingRequest> request = it->second;
  CHARYBDIS_ASSERT(request != nullptr);  // Track admits no null
  request->OnReadResponse(message.from_node(), response);
}

}  // namespace charybdis
