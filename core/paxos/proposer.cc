#include "core/paxos/proposer.h"

#include <algorithm>

#include "core/assert.h"
#include "core/buggify_actions.h"
#include "core/coordinator/result_rows.h"
#include "core/paxos/ballot.h"
#include "core/paxos/row_spans.h"

namespace charybdis {

namespace {

// Cassandra Paxos v2's back-off: grows 1.8x per lost round, capped.
constexpr Nanos kBackOffBase = 2 * kMillisecond;
constexpr Nanos kBackOffCap = 100 * kMillisecond;

// Byte-wise (unsigned) comparison: <0, 0, >0.
int CompareBytes(const std::string& a, const std::string& b) {
  const size_t common = std::min(a.size(), b.size());
  for (size_t i = 0; i < common; i++) {
    const auto x = static_cast<unsigned char>(a[i]);
    const auto y = static_cast<unsigned char>(b[i]);
    if (x != y) return x < y ? -1 : 1;
  }
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

// Whether `row` (null if absent) satisfies a statement's conditions. An
// absent column equals nothing and differs from everything.
bool Holds(const CasStatement& statement, const Row* row, Timestamp now) {
  bool exists = false;
  if (row != nullptr) {
    for (const auto& [column, cell] : row->cells) exists = exists || cell.LiveAt(now);
  }
  if (statement.if_not_exists()) return !exists;
  if (statement.if_exists() && !exists) return false;
  for (const Condition& condition : statement.condition()) {
    const Cell* cell = nullptr;
    if (row != nullptr) {
      auto it = row->cells.find(condition.column());
      if (it != row->cells.end() && it->second.LiveAt(now)) cell = &it->second;
    }
    if (cell == nullptr) {
      if (condition.op() != Condition::NE) return false;
      continue;
    }
    const int order = CompareBytes(cell->value, condition.value());
    const bool ok = condition.op() == Condition::EQ   ? order == 0
                    : condition.op() == Condition::NE ? order != 0
                    : condition.op() == Condition::LT ? order < 0
                    : condition.op() == Condition::LE ? order <= 0
                    : condition.op() == Condition::GT ? order > 0
                                                      : order >= 0;
    if (!ok) return false;
  }
  return true;
}

}  // namespace

Proposer::Proposer(CoordinatorContext& context, Request request, Track track,
                   std::vector<Reply> replies, std::function<void()> answered,
                   std::function<void(const std::vector<uint64_t>&)> done)
    : context_(context),
      request_(std::move(request)),
      track_(std::move(track)),
      replies_(std::move(replies)),
      answered_(std::move(answered)),
      done_(std::move(done)) {
  // One answer per conditional write; serial reads of the same rows may
  // share a round, each answered with its result.
  CHARYBDIS_ASSERT(is_read() ? !replies_.empty() : replies_.size() == request_.batch.size());
  CHARYBDIS_ASSERT(request_.quorum >= 1);
  CHARYBDIS_ASSERT(request_.participants.size() >= request_.quorum);
  for (NodeId participant : request_.participants) {
    CHARYBDIS_ASSERT(std::find(request_.replicas.begin(), request_.replicas.end(), participant) !=
                     request_.replicas.end());
  }
}

std::vector<NodeId> Proposer::LiveParticipants() const {
  std::vector<NodeId> live;
  for (NodeId node : request_.participants) {
    if (context_.liveness.IsUp(node)) live.push_back(node);
  }
  return live;
}

uint64_t Proposer::NewRoundId() {
  round_id_ = context_.NextRequestId();
  round_ids_.push_back(round_id_);
  track_(round_id_, shared_from_this());
  return round_id_;
}

void Proposer::Start() {
  started_ = context_.env.clock->Now();
  context_.metrics.cas_total_operations += replies_.size();
  std::weak_ptr<Proposer> self = weak_from_this();
  timeout_timer_ = context_.env.clock->After(context_.config.coordinator.write_timeout, [self] {
    if (auto proposer = self.lock()) proposer->OnTimeout();
  });
  NewRound();
}

void Proposer::NewRound() {
  if (phase_ == Phase::kDone) return;
  attempts_++;
  CHARYBDIS_ASSERT(request_.quorum >= 1);
  CHARYBDIS_ASSERT(request_.quorum <= request_.participants.size());
  const Ballot previous = ballot_;
  ballot_ = context_.NewBallot();
  CHARYBDIS_ASSERT(BallotLess(previous, ballot_));  // every round above the last
  promises_.clear();
  refused_.clear();
  phase_ = Phase::kPreparing;
  finishing_ = false;  // what this round proposes, Propose decides
  round_trips_++;
  const uint64_t id = NewRoundId();
  rows_read_ = RowsRead();
  joined_before_prepare_ = request_.batch.size();
  for (NodeId node : LiveParticipants()) {
    Envelope message;
    PaxosPrepare* prepare = message.mutable_paxos_prepare();
    prepare->set_request_id(id);
    *prepare->mutable_ballot() = ballot_;
    prepare->set_table(request_.table);
    prepare->set_partition_key(request_.partition_key);
    if (uncertain_origin_) *prepare->mutable_uncertain_origin() = *uncertain_origin_;
    for (const RowSpan& span : rows_read_) *prepare->add_read_rows() = span;
    SendPerhapsLate(context_.env, "paxos.proposer.prepare_late",
                    context_.ReplicaAddress(node, request_.token), std::move(message));
  }
}

bool Proposer::CanJoin(const CasOp& op) const {
  if (is_read() || attempts_ != 1 || phase_ != Phase::kPreparing || finishing_) return false;
  CHARYBDIS_ASSERT(!uncertain_origin_);  // set only after a first round's accept
  CHARYBDIS_ASSERT(op.statement_size() > 0);
  if (rows_read_.empty()) return true;  // the whole partition
  for (const CasStatement& statement : op.statement()) {
    const std::string& key = statement.write().clustering_key();
    const bool read = std::any_of(rows_read_.begin(), rows_read_.end(), [&key](const RowSpan& span) {
      return span.first() <= key && key <= span.last();
    });
    if (!read) return false;
  }
  return true;
}

void Proposer::Join(CasOp op, Reply reply) {
  CHARYBDIS_ASSERT(CanJoin(op));
  CHARYBDIS_ASSERT(replies_.size() == request_.batch.size());
  context_.metrics.cas_total_operations++;
  context_.metrics.cas_write_joined_late++;
  request_.batch.push_back(std::move(op));
  replies_.push_back(std::move(reply));
}

std::vector<RowSpan> Proposer::RowsRead() const {
  // Conditions look at the rows their statements write, and a serial read
  // at its row, so replicas need not send the rest of the partition (a
  // partition of many rows would otherwise travel whole every round). One
  // span per operation, not one for the round: the operations of a shared
  // round write far apart, and one span from the first row to the last
  // would read everything between them.
  if (is_read() && request_.read.range()) return {};
  std::vector<RowSpan> spans;
  auto span_of = [&spans](const std::string& first, const std::string& last) {
    RowSpan& span = spans.emplace_back();
    span.set_first(first);
    span.set_last(last);
  };
  if (is_read()) span_of(request_.read.clustering_key(), request_.read.clustering_key());
  for (const CasOp& op : request_.batch) {
    CHARYBDIS_ASSERT(op.statement_size() > 0);
    std::string first = op.statement(0).write().clustering_key();
    std::string last = first;
    for (const CasStatement& statement : op.statement()) {
      first = std::min(first, statement.write().clustering_key());
      last = std::max(last, statement.write().clustering_key());
    }
    span_of(first, last);
  }
  CHARYBDIS_ASSERT(!spans.empty());
  return SortedDisjoint(std::move(spans));
}

void Proposer::SeeBallot(const Ballot& ballot) { context_.SeeBallot(ballot); }

void Proposer::BackOffAndRetry() {
  CHARYBDIS_ASSERT(phase_ == Phase::kPreparing || phase_ == Phase::kAccepting ||
                   phase_ == Phase::kRepairing);
  context_.metrics.cas_write_contention++;
  phase_ = Phase::kIdle;
  Nanos ceiling = kBackOffBase;
  for (uint32_t i = 1; i < attempts_ && ceiling < kBackOffCap; i++) ceiling = ceiling * 9 / 5;
  ceiling = std::min(ceiling, kBackOffCap);
  ceiling = PerhapsShorter(context_.env, "paxos.proposer.short_backoff", ceiling);
  const Nanos wait = static_cast<Nanos>(context_.env.random->Below(static_cast<uint64_t>(ceiling) + 1));
  std::weak_ptr<Proposer> self = weak_from_this();
  context_.env.clock->After(wait, [self] {
    if (auto proposer = self.lock()) proposer->NewRound();
  });
}

void Proposer::OnPromise(NodeId replica, const PaxosPromise& promise) {
  if (phase_ != Phase::kPreparing || promise.request_id() != round_id_) return;
  if (promises_.count(replica) || refused_.count(replica)) return;  // a duplicate
  SeeBallot(promise.promised_ballot());
  // A replica whose disk failed promised nothing: a refusal, so the round
  // moves on instead of waiting for its timeout.
  if (!promise.ok() || !promise.promised()) {
    if (!promise.ok()) {
      CHARYBDIS_PROBE(context_.env.probes, "paxos.disk_refused_promise");
    } else {
      CHARYBDIS_PROBE(context_.env.probes, "paxos.refused_by_higher_ballot");
    }
    refused_.insert(replica);
    // A higher ballot got there first: a quorum is out of reach for this one.
    const size_t live = LiveParticipants().size();
    if (live < refused_.size() + request_.quorum) BackOffAndRetry();
    return;
  }
  promises_[replica] = promise;
  if (promises_.size() >= request_.quorum) Decide();
}

void Proposer::Decide() {
  CHARYBDIS_ASSERT(phase_ == Phase::kPreparing);
  CHARYBDIS_ASSERT(promises_.size() >= request_.quorum);
  // The newest commit and the newest accepted proposal the quorum knows.
  const Proposal* latest_commit = nullptr;
  const Proposal* in_progress = nullptr;
  for (const auto& [replica, promise] : promises_) {
    if (promise.has_committed()) {
      SeeBallot(promise.committed().ballot());
      if (latest_commit == nullptr || BallotLess(latest_commit->ballot(), promise.committed().ballot())) {
        latest_commit = &promise.committed();
      }
    }
    if (promise.has_accepted()) {
      SeeBallot(promise.accepted().ballot());
      if (in_progress == nullptr || BallotLess(in_progress->ballot(), promise.accepted().ballot())) {
        in_progress = &promise.accepted();
      }
    }
  }
  // A commit our ballot does not dominate in time: retry above it, so our
  // mutation's timestamp is newer than everything decided before it.
  // (Tombstones take the ballot's time minus one: see Propose.)
  if (latest_commit != nullptr && latest_commit->ballot().micros() + 1 >= ballot_.micros()) {
    Ballot floor = latest_commit->ballot();
    floor.set_micros(floor.micros() + 1);
    SeeBallot(floor);  // the next ballot is at least two above it
    CHARYBDIS_PROBE(context_.env.probes, "paxos.retry_above_latest_commit");
    NewRound();
    return;
  }
  if (in_progress != nullptr &&
      (latest_commit == nullptr || BallotLess(latest_commit->ballot(), in_progress->ballot()))) {
    // Someone's accepted proposal may have been chosen: finish it first.
    context_.metrics.cas_write_unfinished_commit++;
    CHARYBDIS_PROBE(context_.env.probes, "paxos.finish_in_progress_round");
    const Ballot origin = in_progress->has_origin() ? in_progress->origin() : in_progress->ballot();
    Propose(in_progress->mutation(), /*finishing=*/true, origin);
    return;
  }
  Partition current;
  for (const auto& [replica, promise] : promises_) current.Merge(Partition::FromProto(promise.data()));
  if (latest_commit != nullptr) current.Merge(Partition::FromProto(latest_commit->mutation()));
  current.Compact();
  if (latest_commit != nullptr && RepairMissingCommit(*latest_commit, current)) return;
  Evaluate(current, latest_commit);
}

bool Proposer::RepairMissingCommit(const Proposal& latest_commit, const Partition& current) {
  CHARYBDIS_ASSERT(phase_ == Phase::kPreparing);
  // Replicas missing the newest commit get it before we read through them.
  // A pruned commit (durable on a quorum) has no mutation left to send:
  // they get what they lack of the partition instead, read repair style.
  repairing_.clear();
  for (const auto& [replica, promise] : promises_) {
    if (!promise.has_committed() || BallotLess(promise.committed().ballot(), latest_commit.ballot())) {
      repairing_.insert(replica);
    }
  }
  if (repairing_.empty()) return false;
  CHARYBDIS_ASSERT(repairing_.size() < promises_.size());  // someone had it
  if (latest_commit.pruned()) {
    CHARYBDIS_PROBE(context_.env.probes, "paxos.repair_after_prune");
  } else {
    CHARYBDIS_PROBE(context_.env.probes, "paxos.repair_missing_commit");
  }
  phase_ = Phase::kRepairing;
  round_trips_++;
  proposal_ = latest_commit;
  const uint64_t id = NewRoundId();
  for (NodeId replica : repairing_) {
    Envelope message;
    message.mutable_paxos_commit()->set_request_id(id);
    Proposal* repair = message.mutable_paxos_commit()->mutable_proposal();
    *repair = proposal_;
    if (proposal_.pruned()) {
      PartitionData* missing = repair->mutable_mutation();
      missing->set_table(request_.table);
      missing->set_partition_key(request_.partition_key);
      Partition::FromProto(promises_[replica].data()).Missing(current).ToProto(missing);
    }
    context_.SendToReplica(replica, request_.token, std::move(message));
  }
  return true;
}

bool Proposer::ResolveUncertainValue(const Proposal* latest_commit) {
  bool committed = false;
  bool all_say_not_committed = true;
  for (const auto& [replica, promise] : promises_) {
    const bool holds_it = promise.has_committed() && promise.committed().has_origin() &&
                          BallotEqual(promise.committed().origin(), *uncertain_origin_);
    committed = committed || holds_it || promise.origin_fate() == PaxosPromise::ORIGIN_COMMITTED;
    all_say_not_committed =
        all_say_not_committed && promise.origin_fate() == PaxosPromise::ORIGIN_NOT_COMMITTED;
  }
  if (committed) {
    // Someone finished our value: applied, as evaluated. Its cells carry the
    // finisher's ballot time; when that commit is the latest we know it,
    // else our own ballot's time is a lower bound.
    if (latest_commit != nullptr && latest_commit->has_origin() &&
        BallotEqual(latest_commit->origin(), *uncertain_origin_)) {
      for (ClientResponse& answer : answers_) {
        if (answer.applied()) answer.set_write_timestamp(latest_commit->ballot().micros());
      }
    }
    CHARYBDIS_PROBE(context_.env.probes, "paxos.fate.committed");
    uncertain_origin_.reset();
    if (latest_commit != nullptr) Prune(latest_commit->ballot());
    AnswerWrites();
    return false;
  }
  // Anything but an explicit "not committed" from every member (a replica
  // that forgot, or one that did not understand the question) leaves the
  // fate unknown.
  if (!all_say_not_committed) {
    CHARYBDIS_PROBE(context_.env.probes, "paxos.fate.unknown");
    AnswerUncertain("too many commits since a minority accepted the proposal: the outcome is uncertain");
    return false;
  }
  // Not chosen: a chosen value is committed on a quorum (ours would say so)
  // or still accepted on one (Decide would have finished it) before any
  // other value can be chosen.
  const bool nothing_decided_since =
      latest_commit == nullptr ? !evaluated_on_
                               : evaluated_on_ && BallotEqual(*evaluated_on_, latest_commit->ballot());
  if (nothing_decided_since) {
    // Nothing is in progress in this quorum, so Paxos lets us propose any
    // value; proposing ours again keeps it the only one of ours in play,
    // and its evaluation still holds.
    CHARYBDIS_PROBE(context_.env.probes, "paxos.fate.propose_again");
    Propose(own_mutation_, /*finishing=*/false, *uncertain_origin_);
    return false;
  }
  if (latest_commit != nullptr && BallotLess(*uncertain_origin_, latest_commit->ballot())) {
    // Another value was decided above ours: every quorum now sees that
    // commit, or its accepts, above our value, so ours can never be chosen.
    // Evaluate afresh.
    CHARYBDIS_PROBE(context_.env.probes, "paxos.fate.decided_above");
    uncertain_origin_.reset();
    return true;
  }
  CHARYBDIS_PROBE(context_.env.probes, "paxos.fate.uncertain");
  AnswerUncertain("a minority accepted the proposal: the outcome is uncertain");
  return false;
}

namespace {

// Applies one conditional write's statements, in order, to `working` (what a
// client would now read) and to `mutation` (what the round will write): a
// later statement overrides an earlier one on the same cell or row.
void ApplyStatements(const CasOp& op, Timestamp micros, Timestamp now, Partition& working,
                     Partition& mutation) {
  for (const CasStatement& statement : op.statement()) {
    const WriteOp& write = statement.write();
    const std::string& key = write.clustering_key();
    if (write.delete_row()) {
      working.rows.erase(key);
      mutation.rows[key] = Row{micros - 1, {}};
    }
    for (const ColumnValue& put : write.put()) {
      Cell cell = LiveCell(put.value(), micros, write.ttl_seconds(), now);
      working.rows[key].cells[put.column()] = cell;
      mutation.rows[key].cells[put.column()] = std::move(cell);
    }
    for (const std::string& column : write.delete_column()) {
      working.rows[key].cells.erase(column);
      mutation.rows[key].cells[column] = Cell{micros, true, "", 0, 0};
    }
  }
}

}  // namespace

void Proposer::Evaluate(const Partition& current, const Proposal* latest_commit) {
  CHARYBDIS_ASSERT(phase_ == Phase::kPreparing);
  CHARYBDIS_ASSERT(promises_.size() >= request_.quorum);
  const Timestamp now = context_.env.clock->Now() / kMicrosecond;
  if (!is_read() && uncertain_origin_ && !ResolveUncertainValue(latest_commit)) return;
  evaluated_on_.reset();
  if (latest_commit != nullptr) evaluated_on_ = latest_commit->ballot();
  if (is_read()) {
    // A serial read: the quorum agrees on the latest commit and nothing is
    // in progress, so this is the value.
    ClientResponse response;
    response.set_code(ClientResponse::OK);
    response.set_consistency(request_.serial_level);
    const ReadOp& read = request_.read;
    std::set<std::string> rows;  // the row read, or those of the range [start, end)
    for (const auto& [key, row] : current.rows) {
      const bool wanted = read.range() ? key >= read.start() && (read.end().empty() || key < read.end())
                                       : key == read.clustering_key();
      if (wanted) rows.insert(key);
    }
    AddVisibleRows(current, now, &rows, response);
    context_.metrics.cas_read_latency.Record(
        std::max<Nanos>(context_.env.clock->Now() - started_, 0) / kMicrosecond);
    if (latest_commit != nullptr) Prune(latest_commit->ballot());
    Finish(std::move(response));
    return;
  }
  Partition working = current;
  Partition mutation;
  answers_.clear();
  bool any_applied = false;
  for (const CasOp& op : request_.batch) {
    std::set<std::string> rows;
    bool holds = true;
    for (const CasStatement& statement : op.statement()) {
      const std::string& key = statement.write().clustering_key();
      rows.insert(key);
      auto it = working.rows.find(key);
      holds = holds && Holds(statement, it == working.rows.end() ? nullptr : &it->second, now);
    }
    ClientResponse response;
    response.set_code(ClientResponse::OK);
    response.set_consistency(request_.serial_level);
    response.set_applied(holds);
    if (holds) {
      any_applied = true;
      response.set_write_timestamp(ballot_.micros());
      ApplyStatements(op, ballot_.micros(), now, working, mutation);
    } else {
      AddVisibleRows(working, now, &rows, response);
    }
    answers_.push_back(std::move(response));
  }
  if (!any_applied) {
    // The quorum holds the latest commit now (repaired if it did not).
    // The late writes are pruned for by the round they run again in.
    if (latest_commit != nullptr) Prune(latest_commit->ballot(), joined_before_prepare_);
    AnswerEarlyAndRetryLate();
    return;
  }
  own_mutation_.Clear();
  own_mutation_.set_table(request_.table);
  own_mutation_.set_partition_key(request_.partition_key);
  mutation.ToProto(&own_mutation_);
  Propose(own_mutation_, /*finishing=*/false, ballot_);
}

void Proposer::Propose(PartitionData mutation, bool finishing, const Ballot& origin) {
  CHARYBDIS_ASSERT(phase_ == Phase::kPreparing);
  CHARYBDIS_ASSERT(promises_.size() >= request_.quorum);
  CHARYBDIS_ASSERT(!BallotLess(ballot_, origin));  // an origin is a ballot of ours or older
  finishing_ = finishing;
  phase_ = Phase::kAccepting;
  round_trips_++;
  accepted_.clear();
  refused_.clear();
  // A value finished under our ballot takes our ballot's time, so it wins
  // last-write-wins over what came before it. Row tombstones go one
  // microsecond earlier, so a row deleted and written again in one batch
  // keeps the new cells (the ballot is above the last commit by more than
  // that, see Decide).
  Partition restamped = Partition::FromProto(mutation);
  for (auto& [key, row] : restamped.rows) {
    if (row.tombstone) row.tombstone = ballot_.micros() - 1;
    for (auto& [column, cell] : row.cells) cell.timestamp = ballot_.micros();
  }
  proposal_.Clear();
  *proposal_.mutable_ballot() = ballot_;
  *proposal_.mutable_origin() = origin;
  PartitionData* data = proposal_.mutable_mutation();
  data->set_table(request_.table);
  data->set_partition_key(request_.partition_key);
  restamped.ToProto(data);
  const uint64_t id = NewRoundId();
  for (const auto& [replica, promise] : promises_) {
    Envelope message;
    message.mutable_paxos_accept()->set_request_id(id);
    *message.mutable_paxos_accept()->mutable_proposal() = proposal_;
    SendPerhapsTwice(context_.env, "paxos.proposer.accept_duplicate",
                     context_.ReplicaAddress(replica, request_.token), std::move(message));
  }
}

void Proposer::OnAcceptReply(NodeId replica, const PaxosAcceptReply& reply) {
  if (phase_ != Phase::kAccepting || reply.request_id() != round_id_) return;
  if (accepted_.count(replica) || refused_.count(replica)) return;  // a duplicate
  if (reply.ok() && reply.accepted()) {
    accepted_.insert(replica);
  } else {
    SeeBallot(reply.promised_ballot());
    refused_.insert(replica);
  }
  if (accepted_.size() >= request_.quorum) return Chosen();
  if (accepted_.size() + refused_.size() < promises_.size()) return;  // more to come
  // Every promised replica answered and no quorum accepted. If some
  // accepted our own value, a later round may still choose it, so it must
  // not be evaluated again (Cassandra bug 6013): the next round learns its
  // fate instead (ResolveUncertainValue). So even when all refused: a
  // refusal answers one copy of the accept, and an earlier copy (a
  // duplicate on the network) may have been accepted before a higher
  // promise, its own answer lost or still on its way.
  if (!finishing_) {
    if (!accepted_.empty()) CHARYBDIS_PROBE(context_.env.probes, "paxos.partial_accept");
    uncertain_origin_ = proposal_.origin();
  }
  BackOffAndRetry();
}

void Proposer::AnswerUncertain(const char* message) {
  context_.metrics.cas_write_timeout_due_to_uncertainty += replies_.size();
  ClientResponse response;
  response.set_code(ClientResponse::WRITE_TIMEOUT);
  response.set_consistency(request_.serial_level);
  response.set_write_type("CAS");
  response.set_received(phase_ == Phase::kAccepting ? static_cast<uint32_t>(accepted_.size()) : 0);
  response.set_blocked_for(request_.quorum);
  response.set_message(message);
  Finish(std::move(response));
}

void Proposer::Chosen() {
  CHARYBDIS_ASSERT(phase_ == Phase::kAccepting);
  CHARYBDIS_ASSERT(accepted_.size() >= request_.quorum);
  CHARYBDIS_ASSERT(BallotEqual(proposal_.ballot(), ballot_));  // chosen under our ballot
  Commit(proposal_);
  if (finishing_) return;  // our own round starts once the commit is in
  for (ClientResponse& answer : answers_) {
    if (answer.applied()) answer.set_write_timestamp(ballot_.micros());
  }
  AnswerWrites();
}

void Proposer::AnswerWrites() {
  CHARYBDIS_ASSERT(!replied_);
  AnswerFirst(replies_.size());
  NoteAnswered();
  // An applied value still has its commit to see through.
  if (phase_ != Phase::kCommitting) Finish(ClientResponse());
}

void Proposer::AnswerFirst(size_t count) {
  CHARYBDIS_ASSERT(answers_.size() == replies_.size());
  CHARYBDIS_ASSERT(count <= replies_.size());
  context_.metrics.cas_write_latency.Record(
      std::max<Nanos>(context_.env.clock->Now() - started_, 0) / kMicrosecond);
  for (size_t i = 0; i < count; i++) {
    if (!answers_[i].applied()) context_.metrics.cas_write_condition_not_met++;
    answers_[i].set_round_trips(round_trips_);
    replies_[i](std::move(answers_[i]));
  }
}

void Proposer::AnswerEarlyAndRetryLate() {
  CHARYBDIS_ASSERT(phase_ == Phase::kPreparing);
  CHARYBDIS_ASSERT(answers_.size() == request_.batch.size());
  CHARYBDIS_ASSERT(joined_before_prepare_ >= 1 && joined_before_prepare_ <= request_.batch.size());
  if (joined_before_prepare_ == request_.batch.size()) return AnswerWrites();
  // Without an accept, this round's answers rest on what the promises
  // read, which may predate a write that joined late: a value chosen by a
  // higher ballot after the promises and acknowledged before that write
  // arrived would be missing from its answer.
  CHARYBDIS_PROBE(context_.env.probes, "paxos.late_writes_run_again");
  AnswerFirst(joined_before_prepare_);
  const auto early = static_cast<std::ptrdiff_t>(joined_before_prepare_);
  request_.batch.erase(request_.batch.begin(), request_.batch.begin() + early);
  replies_.erase(replies_.begin(), replies_.begin() + early);
  answers_.clear();
  NewRound();
}

void Proposer::Commit(const Proposal& proposal) {
  // After the answer: not a round trip the client waits for. Every live
  // replica gets it (not only the participants of a LOCAL_SERIAL round, or
  // the other datacenters would never see the value).
  phase_ = Phase::kCommitting;
  committed_.clear();
  const uint64_t id = NewRoundId();
  for (NodeId node : request_.replicas) {
    if (!context_.liveness.IsUp(node)) continue;
    Envelope message;
    message.mutable_paxos_commit()->set_request_id(id);
    *message.mutable_paxos_commit()->mutable_proposal() = proposal;
    // Commit to one replica well before the others.
    SendPerhapsLate(context_.env, "paxos.proposer.commit_late",
                    context_.ReplicaAddress(node, request_.token), std::move(message));
  }
}

void Proposer::OnCommitAck(NodeId replica, const PaxosCommitAck& ack) {
  if (ack.request_id() != round_id_) return;
  if (!ack.ok()) {
    // A replica whose disk failed the repair cannot be read through: try
    // another round rather than wait for the timeout.
    if (phase_ == Phase::kRepairing && repairing_.count(replica)) {
      CHARYBDIS_PROBE(context_.env.probes, "paxos.commit_repair_failed");
      BackOffAndRetry();
    }
    return;
  }
  if (phase_ == Phase::kRepairing) {
    if (repairing_.erase(replica) == 0) return;
    // It holds the newest commit now, and in its table what the repair
    // sent: all of an unpruned commit's mutation, or of a pruned one what
    // it lacked of the rows this round read (the rest is on the quorum
    // that made the commit durable, which every later quorum meets).
    *promises_[replica].mutable_committed() = proposal_;
    if (repairing_.empty()) {
      // Every promised replica now holds the newest commit: read again.
      phase_ = Phase::kPreparing;
      Decide();
    }
    return;
  }
  if (phase_ != Phase::kCommitting) return;
  // Only the participants count towards the quorum that makes it durable.
  if (std::find(request_.participants.begin(), request_.participants.end(), replica) ==
      request_.participants.end()) {
    return;
  }
  committed_.insert(replica);
  CHARYBDIS_ASSERT(committed_.size() <= request_.participants.size());
  if (committed_.size() < request_.quorum) return;
  if (finishing_) {
    // The round we finished is committed on a quorum: now our own.
    round_trips_++;
    NewRound();
    return;
  }
  Prune(proposal_.ballot());
  if (replied_) Finish(ClientResponse());  // the answer went out already
}

void Proposer::Prune(const Ballot& ballot, std::optional<size_t> operations) {
  // Pruning only saves space: skipping it leaves state a later round reads.
  if (context_.env.buggify->Fires("paxos.proposer.skip_prune")) return;
  CHARYBDIS_ASSERT(operations.value_or(0) <= replies_.size());
  context_.metrics.cas_prune += operations.value_or(replies_.size());
  for (NodeId node : request_.replicas) {
    if (!context_.liveness.IsUp(node)) continue;
    Envelope message;
    PaxosPrune* prune = message.mutable_paxos_prune();
    prune->set_table(request_.table);
    prune->set_partition_key(request_.partition_key);
    *prune->mutable_ballot() = ballot;
    context_.SendToReplica(node, request_.token, std::move(message));
  }
}

void Proposer::NoteAnswered() {
  CHARYBDIS_ASSERT(!replied_);
  replied_ = true;
  auto answered = std::move(answered_);
  answered_ = nullptr;
  if (answered) answered();
}

void Proposer::Finish(ClientResponse response) {
  if (phase_ == Phase::kDone) return;
  if (!replied_) {
    response.set_round_trips(round_trips_);
    for (const Reply& reply : replies_) reply(response);
    NoteAnswered();
  }
  phase_ = Phase::kDone;
  context_.env.clock->Cancel(timeout_timer_);
  auto done = std::move(done_);
  done_ = nullptr;
  if (done) done(round_ids_);  // may destroy this proposer: nothing may follow
}

void Proposer::OnTimeout() {
  if (phase_ == Phase::kDone) return;
  if (replied_) return Finish(ClientResponse());  // only the commit was left
  // An accept of our own value went out: any copy may have been accepted.
  const bool uncertain =
      !is_read() && (uncertain_origin_.has_value() || (phase_ == Phase::kAccepting && !finishing_));
  if (uncertain) return AnswerUncertain("timed out with a partial accept: the outcome is uncertain");
  ClientResponse response;
  response.set_code(is_read() ? ClientResponse::READ_TIMEOUT : ClientResponse::WRITE_TIMEOUT);
  response.set_consistency(request_.serial_level);
  if (!is_read()) response.set_write_type("CAS");
  response.set_blocked_for(request_.quorum);
  response.set_received(static_cast<uint32_t>(accepted_.size()));
  response.set_message("timed out before a quorum promised or accepted");
  Finish(std::move(response));
}

}  // namespace charybdis
