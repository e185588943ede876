#include "core/coordinator/read_executor.h"

#include <algorithm>

#include "core/env/assert.h"
#include "core/env/buggify_actions.h"
#include "core/request/result_rows.h"

namespace charybdis {

namespace {

// Reads need a few hundred samples before a percentile means anything.
constexpr uint64_t kSamplesBeforeSpeculating = 100;

// Between attempts to finish a partition's unfinished Paxos round.
constexpr Nanos kFinishPaxosRetryDelay = 20 * kMillisecond;

// Drops the rows of `partition` past `read_through`, where a read with a
// limit stopped: it holds nothing there to compare.
void DropRowsAfter(Partition& partition, const std::string& read_through) {
  partition.rows.erase(partition.rows.upper_bound(read_through), partition.rows.end());
}

}  // namespace

ReadExecutor::ReadExecutor(CoordinatorContext& context, uint64_t id, Requirement requirement,
                           Token token, ReadOp read, std::vector<NodeId> targets, uint64_t topology_version,
                           Reply reply, std::function<void(const std::vector<uint64_t>&)> done)
    : context_(context),
      id_(id),
      ids_{id},
      requirement_(std::move(requirement)),
      token_(token),
      read_(std::move(read)),
      topology_version_(topology_version),
      targets_(std::move(targets)),
      reply_(std::move(reply)),
      done_(std::move(done)) {
  CHARYBDIS_ASSERT(targets_.size() >= requirement_.blocked_for());
  CHARYBDIS_ASSERT(requirement_.blocked_for() >= 1);
  CHARYBDIS_ASSERT(id_ != 0);
  CHARYBDIS_ASSERT(done_ != nullptr);
}

void ReadExecutor::SendFirstRequests() {
  CHARYBDIS_ASSERT(requirement_.blocked_for() <= targets_.size());
  for (next_target_ = 0; next_target_ < requirement_.blocked_for(); next_target_++) {
    Ask(targets_[next_target_], /*digest_only=*/next_target_ != 0);
  }
  CHARYBDIS_ASSERT(next_target_ == requirement_.blocked_for());
}

void ReadExecutor::FinishPaxosThenRestart() {
  CHARYBDIS_ASSERT(phase_ == Phase::kCollecting);
  CHARYBDIS_ASSERT(!paxos_finished_);  // a read restarts once at most
  phase_ = Phase::kFinishingPaxos;
  paxos_finished_ = true;
  CHARYBDIS_PROBE(context_.env.probes, "read.finish_paxos_first");
  TryFinishingPaxos();
}

void ReadExecutor::TryFinishingPaxos() {
  CHARYBDIS_ASSERT(phase_ == Phase::kFinishingPaxos);
  std::weak_ptr<ReadExecutor> self = weak_from_this();
  context_.finish_paxos(token_, read_.table(), read_.partition_key(), [self](bool ok) {
    auto executor = self.lock();
    if (!executor || executor->phase_ != Phase::kFinishingPaxos) return;
    if (!ok) {
      // The round lost to other proposers or timed out: try again while
      // the read has time (its timeout answers the client). Giving up here
      // failed a read with every replica well (scenarios/lwt_available,
      // seed 29).
      CHARYBDIS_PROBE(executor->context_.env.probes, "read.finish_paxos_again");
      executor->context_.env.clock->After(kFinishPaxosRetryDelay, [self] {
        auto again = self.lock();
        if (again && again->phase_ == Phase::kFinishingPaxos) again->TryFinishingPaxos();
      });
      return;
    }
    executor->ReadAgain();
  });
}

void ReadExecutor::ReadAgain() {
  CHARYBDIS_ASSERT(phase_ == Phase::kFinishingPaxos);
  phase_ = Phase::kCollecting;
  // The replicas that answered the first pass are asked first: one that
  // did not may have died before the failure detector noticed.
  std::stable_partition(targets_.begin(), targets_.end(), [this](NodeId target) { return answers_.count(target) > 0; });
  answers_.clear();
  asked_.clear();
  refused_.clear();  // a refuser has dropped what it could not read
  // A new id: answers of the first pass still on the wire must not count.
  id_ = context_.NextRequestId();
  ids_.push_back(id_);
  CHARYBDIS_ASSERT(ids_.size() == 2);  // the first pass and this one
  context_.track(id_, shared_from_this());
  SendFirstRequests();
  // The first pass's speculation is spent: without a new one, a replica
  // that died before the failure detector noticed failed the read
  // (scenarios/lwt_available, seed 39).
  ArmSpeculation();
}

void ReadExecutor::Start() {
  CHARYBDIS_ASSERT(phase_ == Phase::kCollecting);
  CHARYBDIS_ASSERT(asked_.empty());
  started_ = context_.env.clock->Now();
  SendFirstRequests();
  std::weak_ptr<ReadExecutor> self = weak_from_this();
  timeout_timer_ = context_.env.clock->After(context_.config.coordinator.read_timeout, [self] {
    if (auto executor = self.lock()) executor->OnTimeout();
  });
  ArmSpeculation();
}

void ReadExecutor::ArmSpeculation() {
  CHARYBDIS_ASSERT(phase_ == Phase::kCollecting);
  const double percentile = context_.config.coordinator.speculative_retry_percentile;
  const Histogram& latency = context_.metrics.read_latency_us;
  // Speculating at once only asks one replica more than needed.
  const bool at_once = next_target_ < targets_.size() &&
                       context_.env.buggify->Fires("read.speculate_at_once");
  // Until enough reads were timed, speculate after half the read timeout,
  // as Cassandra does (its sampled latency starts there): a replica that
  // died before the failure detector noticed then costs a slow read, not
  // a failed one (scenarios/availability).
  const bool sampled = latency.count() >= kSamplesBeforeSpeculating;
  if (at_once || (percentile > 0 && next_target_ < targets_.size())) {
    const Nanos after =
        at_once   ? kMicrosecond
        : sampled ? std::max<Nanos>(latency.Percentile(percentile) * kMicrosecond, kMillisecond)
                  : context_.config.coordinator.read_timeout / 2;
    context_.env.clock->Cancel(speculation_timer_);
    std::weak_ptr<ReadExecutor> self = weak_from_this();
    speculation_timer_ = context_.env.clock->After(after, [self] {
      if (auto executor = self.lock()) executor->Speculate();
    });
  }
}

void ReadExecutor::Ask(NodeId replica, bool digest_only) {
  // Every replica asked, whatever for, was a target first.
  CHARYBDIS_ASSERT(std::find(targets_.begin(), targets_.end(), replica) != targets_.end());
  CHARYBDIS_ASSERT(id_ != 0);
  asked_.insert(replica);
  Envelope message;
  ReplicaRead* request = message.mutable_replica_read();
  request->set_request_id(id_);
  *request->mutable_read() = read_;
  request->set_digest_only(digest_only);
  request->set_topology_version(topology_version_);
  context_.metrics.replica_reads_sent++;
  const Address to = context_.ReplicaAddress(replica, token_);
  if (digest_only) {
    SendPerhapsTwice(context_.env, "read.digest_request_duplicate", to, std::move(message));
  } else {
    SendPerhapsLate(context_.env, "read.data_request_late", to, std::move(message));
  }
}

uint32_t ReadExecutor::Counted() const {
  uint32_t counted = 0;
  for (const auto& [replica, answer] : answers_) counted += requirement_.Counts(replica);
  CHARYBDIS_ASSERT(counted <= answers_.size());
  return counted;
}

void ReadExecutor::OnReadResponse(NodeId replica, const ReplicaReadResponse& response) {
  if (!asked_.count(replica)) return;
  if (!response.ok()) {
    ReplaceRefused(replica);
    return;
  }
  auto existing = answers_.find(replica);
  if (response.digest_only()) {
    if (existing != answers_.end()) return;  // a duplicate
    answers_[replica].digest = response.digest();
  } else {
    if (existing != answers_.end() && existing->second.has_data) return;
    Answer& answer = answers_[replica];
    answer.has_data = true;
    answer.data = Partition::FromProto(response.data());
    if (response.cut()) answer.read_through = response.read_through();
    answer.digest = Digest(answer.data, answer.read_through);
  }
  answers_[replica].paxos_in_progress = response.paxos_in_progress();
  const Answer& answer = answers_[replica];
  CHARYBDIS_ASSERT(answer.has_data != response.digest_only());
  CHARYBDIS_ASSERT(answers_.size() <= asked_.size());  // only those asked answer
  switch (phase_) {
    case Phase::kCollecting:
      Collected();
      break;
    case Phase::kRepairReading: {
      // A late digest (a spare answering now) must send its data too.
      if (!answer.has_data) {
        CHARYBDIS_PROBE(context_.env.probes, "read.repair.late_digest");
        Ask(replica, /*digest_only=*/false);
      }
      const bool all_data = std::all_of(answers_.begin(), answers_.end(),
                                        [](const auto& entry) { return entry.second.has_data; });
      if (all_data) RepairWrites();
      break;
    }
    case Phase::kRepairWriting:
    case Phase::kFinishingPaxos:
      break;  // a late spare: the answer no longer depends on it
    case Phase::kReplied:
      if (answer.digest != result_digest_) RepairInBackground(replica, answer);
      break;
  }
  MaybeDone();
}

void ReadExecutor::Collected() {
  CHARYBDIS_ASSERT(phase_ == Phase::kCollecting);
  if (Counted() < requirement_.blocked_for()) return;
  if (!paxos_finished_) {
    for (const auto& [replica, answer] : answers_) {
      // A conditional write a quorum accepted may not be committed yet:
      // an overlapping read must see it.
      if (answer.paxos_in_progress) return FinishPaxosThenRestart();
    }
  }
  const Answer* data = nullptr;
  bool agree = true;
  for (const auto& [replica, answer] : answers_) {
    if (answer.has_data && data == nullptr) data = &answer;
    agree = agree && answer.digest == answers_.begin()->second.digest;
  }
  if (data == nullptr) return;  // the data replica is slow: wait (or speculate)
  if (agree) {
    CHARYBDIS_ASSERT(data->has_data);
    result_ = data->data;
    result_through_ = data->read_through;
    ReplyWith(result_);
    return;
  }
  StartRepair();
}

void ReadExecutor::StartRepair() {
  CHARYBDIS_ASSERT(phase_ == Phase::kCollecting);
  CHARYBDIS_ASSERT(answers_.size() >= 2);  // a disagreement takes two
  phase_ = Phase::kRepairReading;
  bool missing_data = false;
  for (const auto& [replica, answer] : answers_) {
    if (!answer.has_data) {
      missing_data = true;
      Ask(replica, /*digest_only=*/false);
    }
  }
  if (!missing_data) RepairWrites();
}

void ReadExecutor::RepairWrites() {
  CHARYBDIS_ASSERT(phase_ == Phase::kRepairReading || phase_ == Phase::kCollecting);
  CHARYBDIS_ASSERT(Counted() >= requirement_.blocked_for());
  CHARYBDIS_ASSERT(repairing_.empty());  // a read repairs once
  for (const auto& [replica, answer] : answers_) CHARYBDIS_ASSERT(answer.has_data);
  phase_ = Phase::kRepairWriting;
  context_.metrics.foreground_read_repairs++;
  result_ = Partition();
  result_through_.reset();
  for (const auto& [replica, answer] : answers_) {
    result_.Merge(answer.data);
    // Every answer holds all it has up to its own stop, and none more.
    if (answer.read_through && (!result_through_ || *answer.read_through < *result_through_)) {
      result_through_ = answer.read_through;
    }
  }
  result_.Compact();
  if (result_through_) {
    // Past the first stop, a row one replica sent may be one another
    // deleted, or have rows before it that another did not reach:
    // returned, it would be a row from no state, and a page resumed after
    // it would skip rows.
    CHARYBDIS_PROBE(context_.env.probes, "read.repair.cut_at_first_stop");
    DropRowsAfter(result_, *result_through_);
  }
  const uint64_t repaired_digest = Digest(result_, result_through_);
  for (auto& [replica, answer] : answers_) {
    const Partition missing = answer.data.Missing(result_);
    // Once the repair write lands the replica holds the result.
    answer.digest = repaired_digest;
    if (missing.empty()) continue;
    CHARYBDIS_PROBE(context_.env.probes, "read.repair.foreground_write_back");
    repairing_.insert(replica);
    SendRepair(replica, missing);
  }
  if (repairing_.empty()) ReplyWith(result_);
}

void ReadExecutor::OnWriteAck(NodeId replica, bool ok) {
  CHARYBDIS_ASSERT(repairing_.size() <= answers_.size());
  if (phase_ == Phase::kRepairWriting && !ok && repairing_.count(replica)) ReplaceFailedRepair(replica);
  if (phase_ == Phase::kRepairWriting && ok && repairing_.erase(replica) && repairing_.empty()) {
    ReplyWith(result_);
  }
  MaybeDone();
}

// A replica that cannot take its repair write (its disk fails writes)
// would hold up the answer until the read times out: a spare replica
// takes the whole result instead, so that as many replicas hold it as the
// level needs (Cassandra 4 also sends read repair writes to further
// replicas). With no spare left, the timeout answers.
void ReadExecutor::ReplaceFailedRepair(NodeId replica) {
  CHARYBDIS_ASSERT(phase_ == Phase::kRepairWriting);
  if (next_target_ >= targets_.size()) return;
  const NodeId spare = targets_[next_target_++];
  CHARYBDIS_ASSERT(spare != replica);
  CHARYBDIS_ASSERT(!result_.empty());  // something differed, so something was read
  CHARYBDIS_PROBE(context_.env.probes, "read.repair.spare_write");
  repairing_.erase(replica);
  repairing_.insert(spare);
  SendRepair(spare, result_);
}

void ReadExecutor::ReplyWith(const Partition& result) {
  CHARYBDIS_ASSERT(phase_ != Phase::kReplied);  // one answer per read
  CHARYBDIS_ASSERT(Counted() >= requirement_.blocked_for());
  CHARYBDIS_ASSERT(repairing_.empty());  // repair writes hold up the answer
  CHARYBDIS_ASSERT(!timed_out_);
  phase_ = Phase::kReplied;
  result_digest_ = Digest(result, result_through_);
  const Nanos now = context_.env.clock->Now();
  context_.metrics.read_latency_us.Record(std::max<Nanos>(now - started_, 0) / kMicrosecond);

  ClientResponse response;
  response.set_code(ClientResponse::OK);
  response.set_consistency(requirement_.level());
  AddVisibleRows(result, now / kMicrosecond, nullptr, ReadColumns(read_.column()), response);
  if (result_through_) {
    CHARYBDIS_ASSERT(read_.limit() > 0);  // only a read with a limit stops early
    response.set_read_cut(true);
    response.set_read_through(*result_through_);
  }
  reply_(std::move(response));
  // Answers that arrived beyond those needed and disagree get repaired too.
  for (const auto& [replica, answer] : answers_) {
    if (answer.digest != result_digest_) RepairInBackground(replica, answer);
  }
}

void ReadExecutor::RepairInBackground(NodeId replica, const Answer& answer) {
  CHARYBDIS_ASSERT(phase_ == Phase::kReplied);
  if (!answer.has_data) {
    Ask(replica, /*digest_only=*/false);  // learn what it holds first
    return;
  }
  // Past its own stop it read nothing: the result's rows there are not
  // rows it lacks.
  std::optional<Partition> cut;
  if (answer.read_through) {
    cut = result_;
    DropRowsAfter(*cut, *answer.read_through);
  }
  const Partition missing = answer.data.Missing(cut ? *cut : result_);
  if (missing.empty()) return;
  context_.metrics.background_read_repairs++;
  CHARYBDIS_PROBE(context_.env.probes, "read.repair.background");
  SendRepair(replica, missing);
}

void ReadExecutor::SendRepair(NodeId replica, const Partition& missing) {
  CHARYBDIS_ASSERT(!missing.empty());
  Envelope message;
  ReplicaWrite* write = message.mutable_replica_write();
  write->set_request_id(id_);
  write->mutable_mutation()->set_table(read_.table());
  write->mutable_mutation()->set_partition_key(read_.partition_key());
  missing.ToProto(write->mutable_mutation());
  context_.metrics.replica_writes_sent++;
  // A late write-back must still hold up the answer until its ack.
  SendPerhapsLate(context_.env, "read_repair.delay_write_back",
                  context_.ReplicaAddress(replica, token_), std::move(message));
}

void ReadExecutor::Speculate() {
  if (phase_ != Phase::kCollecting || next_target_ >= targets_.size()) return;
  CHARYBDIS_ASSERT(next_target_ >= requirement_.blocked_for());
  context_.metrics.speculative_retries++;
  CHARYBDIS_PROBE(context_.env.probes, "read.speculative_retry");
  Ask(targets_[next_target_++], /*digest_only=*/false);
}

void ReadExecutor::ReplaceRefused(NodeId replica) {
  if (!refused_.insert(replica).second) return;  // a duplicate refusal
  CHARYBDIS_ASSERT(refused_.size() <= asked_.size());  // only those asked refuse
  if (phase_ == Phase::kRepairReading) {
    // It gave a digest and now cannot give its data: read on without it.
    answers_.erase(replica);
    const bool all_data = std::all_of(answers_.begin(), answers_.end(),
                                      [](const auto& entry) { return entry.second.has_data; });
    if (all_data && Counted() >= requirement_.blocked_for()) return RepairWrites();
    if (next_target_ < targets_.size()) return Ask(targets_[next_target_++], /*digest_only=*/false);
    return FailRefused();
  }
  if (phase_ != Phase::kCollecting || answers_.count(replica)) return;  // its answer counts
  std::vector<NodeId> could_answer;
  for (NodeId target : targets_) {
    if (!refused_.count(target)) could_answer.push_back(target);
  }
  if (!requirement_.SatisfiedBy(could_answer)) return FailRefused();
  if (next_target_ >= targets_.size()) return;
  CHARYBDIS_PROBE(context_.env.probes, "read.replace_refused_replica");
  Ask(targets_[next_target_++], /*digest_only=*/false);
}

ClientResponse ReadExecutor::FailureResponse(ClientResponse::Code code, const char* message) {
  CHARYBDIS_ASSERT(phase_ != Phase::kReplied);
  CHARYBDIS_ASSERT(code != ClientResponse::OK);
  phase_ = Phase::kReplied;
  ClientResponse response;
  response.set_code(code);
  response.set_consistency(requirement_.level());
  response.set_received(Counted());
  response.set_blocked_for(requirement_.blocked_for());
  response.set_message(message);
  return response;
}

void ReadExecutor::FailRefused() {
  CHARYBDIS_ASSERT(phase_ == Phase::kCollecting || phase_ == Phase::kRepairReading);
  CHARYBDIS_ASSERT(!refused_.empty());
  CHARYBDIS_ASSERT(refused_.size() <= targets_.size());
  CHARYBDIS_PROBE(context_.env.probes, "read.failed_refused");
  context_.metrics.read_failures++;
  ClientResponse response = FailureResponse(ClientResponse::READ_FAILURE, "too many replicas could not read");
  response.set_failures(static_cast<uint32_t>(refused_.size()));
  reply_(std::move(response));
  // The timeout still ends the executor: refusers never answer.
}

void ReadExecutor::OnTimeout() {
  CHARYBDIS_ASSERT(!timed_out_);  // its timer fires once
  timed_out_ = true;
  if (phase_ != Phase::kReplied) {
    context_.metrics.read_timeouts++;
    ClientResponse response =
        FailureResponse(ClientResponse::READ_TIMEOUT, "timed out waiting for replica answers");
    bool data_present = false;
    for (const auto& [replica, answer] : answers_) data_present = data_present || answer.has_data;
    response.set_data_present(data_present);
    reply_(std::move(response));
  }
  CHARYBDIS_ASSERT(phase_ == Phase::kReplied);
  MaybeDone();
}

void ReadExecutor::MaybeDone() {
  CHARYBDIS_ASSERT(answers_.size() <= asked_.size());
  if (!done_ || phase_ != Phase::kReplied) return;
  // Every replica asked has answered with what it was last asked for, or
  // time is up: nothing more can arrive that matters.
  bool settled = timed_out_;
  if (!settled) {
    settled = answers_.size() == asked_.size();
    for (const auto& [replica, answer] : answers_) {
      settled = settled && (answer.digest == result_digest_ || answer.has_data);
    }
  }
  if (!settled) return;
  context_.env.clock->Cancel(timeout_timer_);
  context_.env.clock->Cancel(speculation_timer_);
  auto done = std::move(done_);
  done_ = nullptr;
  done(ids_);  // may destroy this executor: nothing may follow
}

}  // namespace charybdis
