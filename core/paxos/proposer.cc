#include "core/paxos/proposer.h"

#include <algorithm>

#include "core/env/assert.h"
#include "core/paxos/ballot.h"
#include "core/paxos/round_decisions.h"

namespace charybdis {

namespace {

// Cassandra Paxos v2's back-off: grows 1.8x per lost round, capped.
constexpr Nanos kBackOffBase = 2 * kMillisecond;
constexpr Nanos kBackOffCap = 100 * kMillisecond;

}  // namespace

Proposer::Proposer(ProposerView view, Request request, size_t clients)
    : view_(std::move(view)), request_(std::move(request)), next_client_(clients) {
  CHARYBDIS_ASSERT(view_.clock != nullptr);
  CHARYBDIS_ASSERT(view_.liveness != nullptr);
  CHARYBDIS_ASSERT(view_.ballots != nullptr);
  CHARYBDIS_ASSERT(view_.metrics != nullptr);
  CHARYBDIS_ASSERT(view_.next_request_id != nullptr);
  // One answer per conditional write; serial reads of the same rows may
  // share a round, each answered with its result.
  CHARYBDIS_ASSERT(clients >= 1);
  CHARYBDIS_ASSERT(is_read() || clients == request_.batch.size());
  CHARYBDIS_ASSERT(request_.quorum >= 1);
  CHARYBDIS_ASSERT(request_.participants.size() >= request_.quorum);
  for (NodeId participant : request_.participants) {
    CHARYBDIS_ASSERT(std::find(request_.replicas.begin(), request_.replicas.end(), participant) !=
                     request_.replicas.end());
  }
  for (size_t client = 0; client < clients; client++) clients_.push_back(client);
}

std::vector<ProposerEffect> Proposer::TakeOutbox() {
  std::vector<ProposerEffect> effects = std::exchange(outbox_, {});
  CHARYBDIS_ASSERT(outbox_.empty());
  return effects;
}

void Proposer::Send(NodeId to, Envelope message, ProposerEffect::Fault fault, std::string_view site) {
  CHARYBDIS_ASSERT(std::find(request_.replicas.begin(), request_.replicas.end(), to) != request_.replicas.end());
  ProposerEffect& effect = outbox_.emplace_back();
  effect.kind = ProposerEffect::Kind::kSend;
  effect.to = to;
  effect.message = std::move(message);
  effect.fault = fault;
  effect.site = site;
}

void Proposer::Reply(size_t client, ClientResponse response) {
  CHARYBDIS_ASSERT(client < next_client_);
  ProposerEffect& effect = outbox_.emplace_back();
  effect.kind = ProposerEffect::Kind::kReply;
  effect.client = client;
  effect.response = std::move(response);
}

std::vector<NodeId> Proposer::LiveParticipants() const {
  std::vector<NodeId> live;
  for (NodeId node : request_.participants) {
    if (view_.liveness->IsUp(node)) live.push_back(node);
  }
  CHARYBDIS_ASSERT(live.size() <= request_.participants.size());
  return live;
}

uint64_t Proposer::NewRoundId() {
  const uint64_t previous = round_id_;
  round_id_ = view_.next_request_id();
  CHARYBDIS_ASSERT(round_id_ != previous);
  round_ids_.push_back(round_id_);
  ProposerEffect& effect = outbox_.emplace_back();
  effect.kind = ProposerEffect::Kind::kTrack;
  effect.id = round_id_;
  return round_id_;
}

void Proposer::Start() {
  CHARYBDIS_ASSERT(phase_ == Phase::kIdle);
  CHARYBDIS_ASSERT(attempts_ == 0);
  started_ = Now();
  view_.metrics->cas_total_operations += clients_.size();
  NewRound();
}

void Proposer::Retry() {
  CHARYBDIS_ASSERT(phase_ == Phase::kIdle || phase_ == Phase::kDone);
  NewRound();
}

void Proposer::NewRound() {
  if (phase_ == Phase::kDone) return;
  attempts_++;
  CHARYBDIS_ASSERT(request_.quorum >= 1);
  CHARYBDIS_ASSERT(request_.quorum <= request_.participants.size());
  const Ballot previous = ballot_;
  ballot_ = view_.ballots->Next(Now());
  CHARYBDIS_ASSERT(BallotLess(previous, ballot_));  // every round above the last
  promises_.clear();
  refused_.clear();
  phase_ = Phase::kPreparing;
  finishing_ = false;  // what this round proposes, Propose decides
  round_trips_++;
  const uint64_t id = NewRoundId();
  rows_read_ = RowsToRead(request_.batch, is_read() ? &request_.read : nullptr);
  joined_before_prepare_ = request_.batch.size();
  for (NodeId node : LiveParticipants()) {
    Envelope message;
    PaxosPrepare* prepare = message.mutable_paxos_prepare();
    prepare->set_request_id(id);
    *prepare->mutable_ballot() = ballot_;
    prepare->set_table(request_.table);
    prepare->set_partition_key(request_.partition_key);
    prepare->set_topology_version(request_.topology_version);
    if (uncertain_origin_) *prepare->mutable_uncertain_origin() = *uncertain_origin_;
    for (const RowSpan& span : rows_read_) *prepare->add_read_rows() = span;
    Send(node, std::move(message), ProposerEffect::Fault::kPerhapsLate, "paxos.proposer.prepare_late");
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

size_t Proposer::Join(CasOp op) {
  CHARYBDIS_ASSERT(CanJoin(op));
  CHARYBDIS_ASSERT(clients_.size() == request_.batch.size());
  view_.metrics->cas_total_operations++;
  view_.metrics->cas_write_joined_late++;
  request_.batch.push_back(std::move(op));
  clients_.push_back(next_client_);
  return next_client_++;
}

void Proposer::BackOffAndRetry() {
  CHARYBDIS_ASSERT(phase_ == Phase::kPreparing || phase_ == Phase::kAccepting ||
                   phase_ == Phase::kRepairing);
  view_.metrics->cas_write_contention++;
  phase_ = Phase::kIdle;
  Nanos ceiling = kBackOffBase;
  for (uint32_t i = 1; i < attempts_ && ceiling < kBackOffCap; i++) ceiling = ceiling * 9 / 5;
  ProposerEffect& effect = outbox_.emplace_back();
  effect.kind = ProposerEffect::Kind::kBackOff;
  effect.backoff_ceiling = std::min(ceiling, kBackOffCap);
  CHARYBDIS_ASSERT(effect.backoff_ceiling >= kBackOffBase);
}

void Proposer::OnPromise(NodeId replica, const PaxosPromise& promise) {
  if (phase_ != Phase::kPreparing || promise.request_id() != round_id_) return;
  if (promises_.count(replica) || refused_.count(replica)) return;  // a duplicate
  SeeBallot(promise.promised_ballot());
  // A replica whose disk failed, or that is fenced against the round's
  // topology, promised nothing: a refusal, so the round moves on instead
  // of waiting for its timeout.
  if (!promise.ok() || !promise.promised()) {
    if (promise.fenced()) {
      CHARYBDIS_PROBE(view_.probes, "paxos.fenced_promise");
    } else if (!promise.ok()) {
      CHARYBDIS_PROBE(view_.probes, "paxos.disk_refused_promise");
    } else {
      CHARYBDIS_PROBE(view_.probes, "paxos.refused_by_higher_ballot");
    }
    refused_.insert(replica);
    // A higher ballot got there first: a quorum is out of reach for this one.
    const size_t live = LiveParticipants().size();
    if (live >= refused_.size() + request_.quorum) return;
    // A fence only rises: every retry of this round's topology would be
    // refused again until the timeout. Answered now as the timeout would
    // be, so that the client retries on the topology that moved on.
    if (promise.fenced()) return GiveUp("a replica is fenced against this round's topology, which moved on: retry");
    BackOffAndRetry();
    return;
  }
  promises_[replica] = promise;
  if (promises_.size() >= request_.quorum) Decide();
}

void Proposer::Decide() {
  CHARYBDIS_ASSERT(phase_ == Phase::kPreparing);
  CHARYBDIS_ASSERT(promises_.size() >= request_.quorum);
  for (const auto& [replica, promise] : promises_) {
    if (promise.has_committed()) SeeBallot(promise.committed().ballot());
    if (promise.has_accepted()) SeeBallot(promise.accepted().ballot());
  }
  const QuorumKnowledge known = Survey(promises_);
  const Proposal* latest_commit = known.latest_commit;
  const Proposal* in_progress = known.in_progress;
  // A commit our ballot does not dominate in time: retry above it, so our
  // mutation's timestamp is newer than everything decided before it.
  // (Tombstones take the ballot's time minus one: see Restamped.)
  if (latest_commit != nullptr && latest_commit->ballot().micros() + 1 >= ballot_.micros()) {
    Ballot floor = latest_commit->ballot();
    floor.set_micros(floor.micros() + 1);
    SeeBallot(floor);  // the next ballot is at least two above it
    CHARYBDIS_PROBE(view_.probes, "paxos.retry_above_latest_commit");
    NewRound();
    return;
  }
  if (in_progress != nullptr &&
      (latest_commit == nullptr || BallotLess(latest_commit->ballot(), in_progress->ballot()))) {
    // Someone's accepted proposal may have been chosen: finish it first.
    view_.metrics->cas_write_unfinished_commit++;
    CHARYBDIS_PROBE(view_.probes, "paxos.finish_in_progress_round");
    const Ballot origin = in_progress->has_origin() ? in_progress->origin() : in_progress->ballot();
    Propose(in_progress->mutation(), /*finishing=*/true, origin);
    return;
  }
  const Partition current = CurrentPartition(promises_, latest_commit);
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
    CHARYBDIS_PROBE(view_.probes, "paxos.repair_after_prune");
  } else {
    CHARYBDIS_PROBE(view_.probes, "paxos.repair_missing_commit");
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
    Send(replica, std::move(message));
  }
  return true;
}

bool Proposer::ResolveUncertainValue(const Proposal* latest_commit) {
  CHARYBDIS_ASSERT(uncertain_origin_.has_value());
  CHARYBDIS_ASSERT(!is_read());
  switch (FateOfUncertainValue(promises_, *uncertain_origin_, latest_commit, evaluated_on_)) {
    case Fate::kCommitted:
      // Someone finished our value: applied, as evaluated. Its cells carry
      // the finisher's ballot time; when that commit is the latest we know
      // it, else our own ballot's time is a lower bound.
      if (latest_commit != nullptr && latest_commit->has_origin() &&
          BallotEqual(latest_commit->origin(), *uncertain_origin_)) {
        for (ClientResponse& answer : answers_) {
          if (answer.applied()) answer.set_write_timestamp(latest_commit->ballot().micros());
        }
      }
      CHARYBDIS_PROBE(view_.probes, "paxos.fate.committed");
      uncertain_origin_.reset();
      if (latest_commit != nullptr) Prune(latest_commit->ballot());
      AnswerWrites();
      return false;
    case Fate::kUnknown:
      CHARYBDIS_PROBE(view_.probes, "paxos.fate.unknown");
      AnswerUncertain("too many commits since a minority accepted the proposal: the outcome is uncertain");
      return false;
    case Fate::kProposeAgain:
      CHARYBDIS_PROBE(view_.probes, "paxos.fate.propose_again");
      Propose(own_mutation_, /*finishing=*/false, *uncertain_origin_);
      return false;
    case Fate::kDecidedAbove:
      CHARYBDIS_PROBE(view_.probes, "paxos.fate.decided_above");
      uncertain_origin_.reset();
      return true;
    case Fate::kUncertain:
      break;
  }
  CHARYBDIS_PROBE(view_.probes, "paxos.fate.uncertain");
  AnswerUncertain("a minority accepted the proposal: the outcome is uncertain");
  return false;
}

void Proposer::Evaluate(const Partition& current, const Proposal* latest_commit) {
  CHARYBDIS_ASSERT(phase_ == Phase::kPreparing);
  CHARYBDIS_ASSERT(promises_.size() >= request_.quorum);
  const Timestamp now = Now() / kMicrosecond;
  if (!is_read() && uncertain_origin_ && !ResolveUncertainValue(latest_commit)) return;
  evaluated_on_.reset();
  if (latest_commit != nullptr) evaluated_on_ = latest_commit->ballot();
  if (is_read()) {
    // A serial read: the quorum agrees on the latest commit and nothing is
    // in progress, so this is the value.
    ClientResponse response = SerialReadAnswer(request_.read, current, now, request_.serial_level);
    view_.metrics->cas_read_latency.Record(std::max<Nanos>(Now() - started_, 0) / kMicrosecond);
    if (latest_commit != nullptr) Prune(latest_commit->ballot());
    Finish(std::move(response));
    return;
  }
  BatchEvaluation evaluation =
      EvaluateBatch(request_.batch, current, ballot_, now, request_.serial_level);
  answers_ = std::move(evaluation.answers);
  if (!evaluation.any_applied) {
    // The quorum holds the latest commit now (repaired if it did not).
    // The late writes are pruned for by the round they run again in.
    if (latest_commit != nullptr) Prune(latest_commit->ballot(), joined_before_prepare_);
    AnswerEarlyAndRetryLate();
    return;
  }
  own_mutation_.Clear();
  own_mutation_.set_table(request_.table);
  own_mutation_.set_partition_key(request_.partition_key);
  evaluation.mutation.ToProto(&own_mutation_);
  Propose(own_mutation_, /*finishing=*/false, ballot_);
}

void Proposer::Propose(const PartitionData& mutation, bool finishing, const Ballot& origin) {
  CHARYBDIS_ASSERT(phase_ == Phase::kPreparing);
  CHARYBDIS_ASSERT(promises_.size() >= request_.quorum);
  finishing_ = finishing;
  phase_ = Phase::kAccepting;
  round_trips_++;
  accepted_.clear();
  refused_.clear();
  proposal_ = Restamped(mutation, request_.table, request_.partition_key, ballot_, origin);
  const uint64_t id = NewRoundId();
  for (const auto& [replica, promise] : promises_) {
    Envelope message;
    message.mutable_paxos_accept()->set_request_id(id);
    *message.mutable_paxos_accept()->mutable_proposal() = proposal_;
    message.mutable_paxos_accept()->set_topology_version(request_.topology_version);
    Send(replica, std::move(message), ProposerEffect::Fault::kPerhapsTwice, "paxos.proposer.accept_duplicate");
  }
}

void Proposer::OnAcceptReply(NodeId replica, const PaxosAcceptReply& reply) {
  if (phase_ != Phase::kAccepting || reply.request_id() != round_id_) return;
  if (accepted_.count(replica) || refused_.count(replica)) return;  // a duplicate
  CHARYBDIS_ASSERT(promises_.count(replica) == 1);  // accepts went to the promisers only
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
    if (!accepted_.empty()) CHARYBDIS_PROBE(view_.probes, "paxos.partial_accept");
    uncertain_origin_ = proposal_.origin();
  }
  BackOffAndRetry();
}

void Proposer::AnswerUncertain(const char* message) {
  CHARYBDIS_ASSERT(!is_read());
  view_.metrics->cas_write_timeout_due_to_uncertainty += clients_.size();
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
  CHARYBDIS_ASSERT(!is_read());
  AnswerFirst(clients_.size());
  NoteAnswered();
  // An applied value still has its commit to see through.
  if (phase_ != Phase::kCommitting) Finish(ClientResponse());
}

void Proposer::AnswerFirst(size_t count) {
  CHARYBDIS_ASSERT(answers_.size() == clients_.size());
  CHARYBDIS_ASSERT(count <= clients_.size());
  view_.metrics->cas_write_latency.Record(std::max<Nanos>(Now() - started_, 0) / kMicrosecond);
  for (size_t i = 0; i < count; i++) {
    if (!answers_[i].applied()) view_.metrics->cas_write_condition_not_met++;
    answers_[i].set_round_trips(round_trips_);
    Reply(clients_[i], std::move(answers_[i]));
  }
}

void Proposer::AnswerEarlyAndRetryLate() {
  CHARYBDIS_ASSERT(phase_ == Phase::kPreparing);
  CHARYBDIS_ASSERT(answers_.size() == request_.batch.size());
  CHARYBDIS_ASSERT(joined_before_prepare_ >= 1);
  CHARYBDIS_ASSERT(joined_before_prepare_ <= request_.batch.size());
  if (joined_before_prepare_ == request_.batch.size()) return AnswerWrites();
  // Without an accept, this round's answers rest on what the promises
  // read, which may predate a write that joined late: a value chosen by a
  // higher ballot after the promises and acknowledged before that write
  // arrived would be missing from its answer.
  CHARYBDIS_PROBE(view_.probes, "paxos.late_writes_run_again");
  AnswerFirst(joined_before_prepare_);
  const auto early = static_cast<std::ptrdiff_t>(joined_before_prepare_);
  request_.batch.erase(request_.batch.begin(), request_.batch.begin() + early);
  clients_.erase(clients_.begin(), clients_.begin() + early);
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
    if (!view_.liveness->IsUp(node)) continue;
    Envelope message;
    message.mutable_paxos_commit()->set_request_id(id);
    *message.mutable_paxos_commit()->mutable_proposal() = proposal;
    // Commit to one replica well before the others.
    Send(node, std::move(message), ProposerEffect::Fault::kPerhapsLate, "paxos.proposer.commit_late");
  }
}

void Proposer::OnCommitAck(NodeId replica, const PaxosCommitAck& ack) {
  if (ack.request_id() != round_id_) return;
  if (!ack.ok()) {
    // A replica whose disk failed the repair cannot be read through: try
    // another round rather than wait for the timeout.
    if (phase_ == Phase::kRepairing && repairing_.count(replica)) {
      CHARYBDIS_PROBE(view_.probes, "paxos.commit_repair_failed");
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
    CHARYBDIS_ASSERT(promises_.count(replica) == 1);
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
  CHARYBDIS_ASSERT(operations.value_or(0) <= clients_.size());
  ProposerEffect& effect = outbox_.emplace_back();
  effect.kind = ProposerEffect::Kind::kPrune;
  effect.operations = operations.value_or(clients_.size());
  for (NodeId node : request_.replicas) {
    if (!view_.liveness->IsUp(node)) continue;
    Envelope message;
    PaxosPrune* prune = message.mutable_paxos_prune();
    prune->set_table(request_.table);
    prune->set_partition_key(request_.partition_key);
    *prune->mutable_ballot() = ballot;
    effect.prunes.emplace_back(node, std::move(message));
  }
}

void Proposer::NoteAnswered() {
  CHARYBDIS_ASSERT(!replied_);
  replied_ = true;
  outbox_.emplace_back().kind = ProposerEffect::Kind::kAnswered;
}

void Proposer::Finish(ClientResponse response) {
  if (phase_ == Phase::kDone) return;
  if (!replied_) {
    response.set_round_trips(round_trips_);
    for (size_t client : clients_) Reply(client, response);
    NoteAnswered();
  }
  phase_ = Phase::kDone;
  ProposerEffect& effect = outbox_.emplace_back();
  effect.kind = ProposerEffect::Kind::kDone;
  effect.ids = round_ids_;
}

void Proposer::OnTimeout() {
  if (phase_ == Phase::kDone) return;
  GiveUp("timed out before a quorum promised or accepted");
}

void Proposer::GiveUp(const char* why) {
  CHARYBDIS_ASSERT(phase_ != Phase::kDone);
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
  response.set_message(why);
  Finish(std::move(response));
}

}  // namespace charybdis
