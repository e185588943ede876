#include "core/paxos/lwt_queue.h"

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "core/request/consistency.h"

namespace charybdis {

namespace {

// At most this many conditional writes share one Paxos round, and at most
// this many statements (unless one request alone has more): every message
// of the round carries them, and a round of 64 batches of 1000 rows would
// not fit in gRPC's 4 MiB message limit.
constexpr size_t kMaxCasBatch = 64;
constexpr size_t kMaxCasBatchStatements = 4096;

// Serial reads of one partition that may share a round: the same rows.
bool SameRead(const ReadOp& a, const ReadOp& b) {
  return a.range() == b.range() && a.clustering_key() == b.clustering_key() && a.start() == b.start() &&
         a.end() == b.end();
}

}  // namespace

LwtQueue::LwtQueue(CoordinatorContext& context, const cql::SchemaLog& schema_log, BallotClock ballots)
    : context_(context), schema_log_(schema_log), ballots_(ballots) {}

void LwtQueue::Cas(const CasOp& op, Reply reply) {
  CHARYBDIS_ASSERT(op.statement_size() > 0);
  const WriteOp& first = op.statement(0).write();
  const ConsistencyLevel serial = SerialLevelOf(op);
  CHARYBDIS_ASSERT(IsSerial(serial));
  Queued operation;
  operation.cas = op;
  operation.reply = std::move(reply);
  Enqueue(serial, first.table(), first.partition_key(), std::move(operation));
}

void LwtQueue::SerialRead(const ReadOp& op, Reply reply) {
  CHARYBDIS_ASSERT(IsSerial(op.consistency()));
  Queued operation;
  operation.is_read = true;
  operation.read = op;
  operation.reply = std::move(reply);
  Enqueue(op.consistency(), op.table(), op.partition_key(), std::move(operation));
}

void LwtQueue::FinishRound(Token token, const std::string& table, const std::string& partition_key,
                           std::function<void(bool)> done) {
  CHARYBDIS_ASSERT(done != nullptr);
  ReadOp read;
  read.set_table(table);
  read.set_partition_key(partition_key);
  RunPaxos(token, table, partition_key, CL_SERIAL, {}, read,
           {[done = std::move(done)](ClientResponse response) { done(response.code() == ClientResponse::OK); }});
}

size_t LwtQueue::NextRoundSize(const std::vector<Queued>& queued) {
  CHARYBDIS_ASSERT(!queued.empty());
  size_t take = 0, statements = 0;
  if (queued.front().is_read) {
    // Reads waiting for the same rows: one round answers them all, its
    // linearization point inside each of their intervals.
    while (take < queued.size() && take < kMaxCasBatch && queued[take].is_read &&
           SameRead(queued[take].read, queued.front().read)) {
      take++;
    }
    CHARYBDIS_ASSERT(take >= 1);
    return take;
  }
  while (take < queued.size() && take < kMaxCasBatch && !queued[take].is_read) {
    statements += static_cast<size_t>(queued[take].cas.statement_size());
    if (take > 0 && statements > kMaxCasBatchStatements) break;
    take++;
  }
  CHARYBDIS_ASSERT(take >= 1);  // one request alone may be over the statement bound
  return take;
}

bool LwtQueue::JoinedRunningRound(ProposerShell* running, Queued& operation) {
  if (running == nullptr || operation.is_read || !running->CanJoin(operation.cas)) return false;
  const std::vector<CasOp>& batch = running->batch();
  if (batch.size() >= kMaxCasBatch) return false;
  size_t statements = static_cast<size_t>(operation.cas.statement_size());
  for (const CasOp& op : batch) statements += static_cast<size_t>(op.statement_size());
  if (statements > kMaxCasBatchStatements) return false;
  running->Join(std::move(operation.cas), std::move(operation.reply));
  return true;
}

void LwtQueue::Enqueue(ConsistencyLevel serial, const std::string& table, const std::string& partition_key,
                       Queued operation) {
  CHARYBDIS_ASSERT(IsSerial(serial));
  if (!context_.config.coordinator.lwt_batching) {
    std::vector<Queued> alone;
    alone.push_back(std::move(operation));
    RunRound(std::move(alone), nullptr);
    return;
  }
  std::string queue = absl::StrCat(serial, "/", table.size(), ":", table, "/", partition_key);
  auto [it, idle] = queues_.try_emplace(queue);
  PartitionQueue& queued = it->second;
  CHARYBDIS_ASSERT(!idle || queued.waiting.empty());
  if (!idle && queued.waiting.empty() && JoinedRunningRound(queued.running.lock().get(), operation)) return;
  queued.waiting.push_back(std::move(operation));
  if (idle) RunQueued(queue);
}

void LwtQueue::RunQueued(const std::string& queue) {
  auto it = queues_.find(queue);
  CHARYBDIS_ASSERT(it != queues_.end());
  std::vector<Queued>& waiting = it->second.waiting;
  if (waiting.empty()) {
    queues_.erase(it);  // idle again
    return;
  }
  // A round of one is what the naive mode always runs.
  const size_t take = context_.env.buggify->Fires("coordinator.lwt_batch_of_one") ? 1 : NextRoundSize(waiting);
  CHARYBDIS_ASSERT(take <= waiting.size());
  std::vector<Queued> round(std::make_move_iterator(waiting.begin()),
                            std::make_move_iterator(waiting.begin() + static_cast<std::ptrdiff_t>(take)));
  waiting.erase(waiting.begin(), waiting.begin() + static_cast<std::ptrdiff_t>(take));
  NoteRunning(queue, RunRound(std::move(round), [this, queue] { RunQueued(queue); }));
}

std::shared_ptr<ProposerShell> LwtQueue::RunRound(std::vector<Queued> round, std::function<void()> after) {
  CHARYBDIS_ASSERT(!round.empty());
  if (round.front().is_read) {
    const ReadOp read = round.front().read;
    std::vector<Reply> readers;
    for (Queued& operation : round) readers.push_back(std::move(operation.reply));
    return RunPaxos(TokenOf(read.partition_key()), read.table(), read.partition_key(), read.consistency(), {},
                    read, std::move(readers), std::move(after));
  }
  std::vector<CasOp> batch;
  std::vector<Reply> replies;
  for (Queued& operation : round) {
    CHARYBDIS_ASSERT(!operation.is_read);
    batch.push_back(std::move(operation.cas));
    replies.push_back(std::move(operation.reply));
  }
  const WriteOp& first = batch.front().statement(0).write();
  const ConsistencyLevel serial = SerialLevelOf(batch.front());
  const std::string table = first.table();
  const std::string key = first.partition_key();
  return RunPaxos(TokenOf(key), table, key, serial, std::move(batch), ReadOp(), std::move(replies),
                  std::move(after));
}

void LwtQueue::NoteRunning(const std::string& queue, std::shared_ptr<ProposerShell> proposer) {
  // Looked up again: a round that could not start, or that answered before
  // RunPaxos returned, ran the next one (or emptied the queue) already.
  if (proposer == nullptr || proposer->answered()) return;
  auto it = queues_.find(queue);
  CHARYBDIS_ASSERT(it != queues_.end());  // the round is still running
  it->second.running = std::move(proposer);
}

std::shared_ptr<ProposerShell> LwtQueue::RunPaxos(Token token, const std::string& table,
                                                  const std::string& partition_key, ConsistencyLevel serial_level,
                                                  std::vector<CasOp> batch, ReadOp read, std::vector<Reply> replies,
                                                  std::function<void()> after) {
  CHARYBDIS_ASSERT(!replies.empty());
  CHARYBDIS_ASSERT(batch.empty() || replies.size() == batch.size());
  // SERIAL: a quorum of every replica; LOCAL_SERIAL: of this datacenter's.
  Proposer::Request request;
  request.token = token;
  request.table = table;
  request.partition_key = partition_key;
  request.serial_level = serial_level;
  request.batch = std::move(batch);
  request.read = std::move(read);
  absl::StatusOr<std::shared_ptr<const topology::Placement>> placement =
      context_.placements.For(schema_log_.ReplicationOf(table));
  if (!placement.ok()) return Refuse(request, Unplaceable(serial_level, placement.status()), replies, after);
  // During a topology change the pending replica takes part, and a quorum
  // is ScyllaDB's natural/2 + 1 + pending: a majority of the owners before
  // and of the owners after (docs/topology.md). More than one pending
  // replica is refused, as Cassandra and ScyllaDB do; so is a range whose
  // writes must also meet their level among the owners after (a factor
  // lowered, a class changed): a majority of the owners now may hold no
  // majority of those after.
  const topology::Placement::Replicas replicas = (*placement)->WriteReplicasOf(token);
  if (replicas.pending.size() > 1 || replicas.also_among_after) {
    const uint32_t involved = static_cast<uint32_t>(replicas.natural.size() + replicas.pending.size());
    return Refuse(request,
                  Unavailable(serial_level, involved, involved + 1,
                              replicas.pending.size() > 1
                                  ? "more than one pending replica: Paxos cannot run during this topology change"
                                  : "a change of replication drops replicas of this range: Paxos cannot run until "
                                    "it is done"),
                  replies, after);
  }
  Requirement quorum(serial_level == CL_LOCAL_SERIAL ? CL_LOCAL_QUORUM : CL_QUORUM, (*placement)->now(),
                     context_.local_datacenter);
  request.replicas = replicas.natural;
  if (!replicas.pending.empty()) {
    quorum.AddPending(replicas.pending, (*placement)->after());
    request.replicas.push_back(replicas.pending.front());
  }
  for (NodeId replica : request.replicas) {
    if (quorum.Counts(replica)) request.participants.push_back(replica);
  }
  request.quorum = quorum.blocked_for();
  request.topology_version = (*placement)->version();
  return StartRound(std::move(request), std::move(replies), std::move(after));
}

void LwtQueue::RunAmong(std::vector<NodeId> participants, CasOp cas, ReadOp read, Reply reply) {
  CHARYBDIS_ASSERT(!participants.empty());
  CHARYBDIS_ASSERT(cas.statement_size() <= 1);  // one row of one instance
  Proposer::Request request;
  request.table = cas.statement_size() == 1 ? cas.statement(0).write().table() : read.table();
  request.partition_key = cas.statement_size() == 1 ? cas.statement(0).write().partition_key() : read.partition_key();
  request.token = TokenOf(request.partition_key);
  request.serial_level = CL_SERIAL;
  if (cas.statement_size() == 1) request.batch.push_back(std::move(cas));
  request.read = std::move(read);
  request.replicas = participants;
  request.participants = std::move(participants);
  request.quorum = static_cast<uint32_t>(request.participants.size() / 2 + 1);
  std::vector<Reply> replies;
  replies.push_back(std::move(reply));
  StartRound(std::move(request), std::move(replies), nullptr);
}

std::shared_ptr<ProposerShell> LwtQueue::StartRound(Proposer::Request request, std::vector<Reply> replies,
                                                    std::function<void()> after) {
  CHARYBDIS_ASSERT(request.quorum >= 1);
  CHARYBDIS_ASSERT(request.quorum <= request.participants.size());
  uint32_t live = 0;
  for (NodeId participant : request.participants) live += context_.liveness.IsUp(participant);
  CHARYBDIS_ASSERT(live <= request.participants.size());
  if (live < request.quorum) {
    return Refuse(request, Unavailable(request.serial_level, live, request.quorum, "not enough live replicas for Paxos"),
                  replies, after);
  }
  auto proposer = std::make_shared<ProposerShell>(context_, ballots_, std::move(request), std::move(replies),
                                                  std::move(after));
  proposer->Start();
  return proposer;
}

std::shared_ptr<ProposerShell> LwtQueue::Refuse(const Proposer::Request& request, const ClientResponse& response,
                                                const std::vector<Reply>& replies, const std::function<void()>& after) {
  CHARYBDIS_ASSERT(response.code() != ClientResponse::OK);
  (request.batch.empty() ? context_.metrics.read_unavailable : context_.metrics.write_unavailable) += replies.size();
  for (const auto& reply : replies) reply(response);
  if (after) after();
  return nullptr;
}

}  // namespace charybdis
