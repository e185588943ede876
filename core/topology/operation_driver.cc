#include "core/topology/operation_driver.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "core/env/probe.h"
#include "core/topology/placement.h"
#include "core/topology/stream_plan.h"

namespace charybdis::topology {

OperationDriver::OperationDriver(ShardEnv env, uint32_t shards_per_node, const TopologyLog& log,
                                 Replications replications, Append append, AppendSchema append_schema,
                                 std::function<bool(NodeId)> held_down)
    : env_(env),
      shards_per_node_(shards_per_node),
      log_(log),
      replications_(std::move(replications)),
      append_(std::move(append)),
      append_schema_(std::move(append_schema)),
      held_down_(std::move(held_down)) {
  CHARYBDIS_ASSERT(env_.self.shard == 0);
  CHARYBDIS_ASSERT(shards_per_node_ >= 1);
  CHARYBDIS_ASSERT(replications_ != nullptr && append_ != nullptr && append_schema_ != nullptr && held_down_ != nullptr);
}

void OperationDriver::OnTopologyChange() {
  // Posted: the agent tells of a change from inside its own round.
  env_.reactor->Post([this] { Drive(); });
}

// Whether the log ends with the finish of an operation this node drove:
// its last barrier (every live member holds the finish) is this node's.
bool OperationDriver::FinishedOwnOperation() const {
  const std::vector<Entry>& entries = log_.entries();
  if (entries.empty() || entries.back().kind != Entry::Kind::kFinish) return false;
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    if (it->kind == Entry::Kind::kBegin) return it->driver == env_.self.node;
  }
  return false;
}

void OperationDriver::Drive() {
  const Topology& topology = log_.topology();
  const bool driving = topology.move() && topology.move()->driver == env_.self.node;
  if (!driving && !FinishedOwnOperation()) {
    Reset();
    return AnswerWaiters();
  }
  if (topology.version() == working_version_) return;  // this stage is in hand
  Reset();
  working_version_ = topology.version();
  StartBarrier();
  AnswerWaiters();
}

void OperationDriver::WhenDone(const std::string& keyspace, uint64_t since_version,
                               std::function<void(ClientResponse)> answer) {
  CHARYBDIS_ASSERT(answer != nullptr);
  waiters_.push_back(Waiter{keyspace, since_version, std::move(answer)});
  AnswerWaiters();
}

// A waiter's change is done once its finish is held by every live member
// (this driver's last barrier passed, or another operation began since),
// and failed if it ended otherwise (rolled back).
void OperationDriver::AnswerWaiters() {
  const Topology& topology = log_.topology();
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    const bool in_progress = topology.move() && topology.move()->since_version == it->since_version;
    auto changed = topology.changed_replications().find(it->keyspace);
    const bool finished = changed != topology.changed_replications().end() &&
                          changed->second.since_version == it->since_version;
    const bool last_barrier_passed = barrier_passed_ && working_version_ == topology.version();
    const bool waiting_for_last_barrier = finished && !topology.move() && !last_barrier_passed;
    if (in_progress || waiting_for_last_barrier) {
      ++it;
      continue;
    }
    ClientResponse response;
    if (!finished) {
      CHARYBDIS_PROBE(env_.probes, "topology.replication_change_rolled_back");
      response.set_code(ClientResponse::INVALID_REQUEST);
      response.set_message("the change of replication was rolled back before its reads moved; nothing changed");
    }
    env_.reactor->Post([answer = std::move(it->answer), response] { answer(response); });
    it = waiters_.erase(it);
  }
}

void OperationDriver::StartBarrier() {
  CHARYBDIS_ASSERT(!barrier_passed_ && barrier_waiting_.empty());
  for (const auto& [id, member] : log_.topology().members()) {
    if (member.state != NodeState::kLeft) barrier_waiting_.insert(id);
  }
  AskBarrier();
}

// Asks the members yet to answer, letting go those the failure detector
// holds down: a node down now reads the log before it serves again. Not
// those it has not heard yet: a driver restarted within a barrier would let
// every member go and begin the next stage while some still route by the
// last (the restarted driver of scenarios/replicate_class seed 86 asked
// only itself).
void OperationDriver::AskBarrier() {
  for (auto it = barrier_waiting_.begin(); it != barrier_waiting_.end();) {
    it = *it != env_.self.node && held_down_(*it) ? barrier_waiting_.erase(it) : std::next(it);
  }
  if (barrier_waiting_.empty()) return BarrierPassed();
  for (NodeId member : barrier_waiting_) {
    Envelope message;
    message.mutable_topology_barrier()->set_request_id(++last_request_id_);
    message.mutable_topology_barrier()->set_version(working_version_);
    env_.network->Send(Address{member, 0}, std::move(message));
  }
  timer_ = env_.clock->After(kBarrierResendInterval, [this] {
    timer_ = 0;
    AskBarrier();
  });
}

void OperationDriver::OnBarrierDone(const Envelope& message) {
  if (barrier_passed_ || message.topology_barrier_done().version() != working_version_) return;
  if (barrier_waiting_.erase(message.from_node()) == 0 || !barrier_waiting_.empty()) return;
  env_.clock->Cancel(timer_);
  timer_ = 0;
  BarrierPassed();
}

void OperationDriver::BarrierPassed() {
  barrier_passed_ = true;
  // The barrier after the finish: every live member holds it, so the node
  // an operation removed may now be stopped without taking the only
  // knowledge of the finish with it. Done.
  if (!log_.topology().move()) {
    CHARYBDIS_PROBE(env_.probes, "topology.driver_final_barrier_passed");
    return AnswerWaiters();
  }
  const Move& move = *log_.topology().move();
  if (move.stage == Stage::kWriteBothReadOld) {
    CHARYBDIS_PROBE(env_.probes, "topology.driver_streams");
    return StartStreams();
  }
  CHARYBDIS_ASSERT(move.stage == Stage::kWriteBothReadNew);
  if (move.operation == Operation::kReplicate) return AppendSchemaThenFinish();
  CHARYBDIS_PROBE(env_.probes, "topology.driver_finishes");
  AppendStep(Entry::Kind::kFinish);
}

// The keyspace's schema changes now that its data is in place and its
// reads moved; the finish follows, so that no node's placement falls back
// to a schema without the change (PlacedByOf).
void OperationDriver::AppendSchemaThenFinish() {
  const uint64_t version = working_version_;
  append_schema_(log_.topology().move()->replicating.statement, [this, version](ClientResponse answer) {
    if (version != working_version_) return;
    // Appended, or refused (the keyspace was dropped meanwhile, or this
    // driver appended it before a restart): either way, on to the finish.
    if (answer.code() == ClientResponse::OK || answer.code() == ClientResponse::INVALID_REQUEST) {
      CHARYBDIS_PROBE(env_.probes, "topology.driver_finishes");
      return AppendStep(Entry::Kind::kFinish);
    }
    CHARYBDIS_PROBE(env_.probes, "topology.driver_schema_append_failed");
    timer_ = env_.clock->After(kRetryDelay, [this, version] {
      timer_ = 0;
      if (version == working_version_ && log_.topology().version() == version) AppendSchemaThenFinish();
    });
  });
}

void OperationDriver::StartStreams() {
  const Topology& topology = log_.topology();
  std::vector<Transfer> planned;
  for (const auto& [whose, replication] : replications_()) {
    // One the topology cannot hold is Unavailable, not written: nothing of
    // it needs to move (docs/topology.md).
    const PlacedBy placed_by = PlacedByOf(topology, replication);
    if (!CheckPlaceable(topology, placed_by).ok()) continue;
    for (Transfer& transfer : PlanStreams(topology, placed_by)) planned.push_back(std::move(transfer));
  }
  for (const Transfer& transfer : MergeTransfers(planned)) {
    CHARYBDIS_ASSERT(transfer.to != transfer.from && !transfer.spans.empty());
    StreamRanges request;
    // Named after the operation, so that asking again after any crash
    // resumes the receiver's streams rather than starting others.
    request.set_name(absl::StrCat("topology-", topology.move()->since_version, "-from-", transfer.from));
    request.set_source(transfer.from);
    for (const TokenSpan& span : transfer.spans) {
      StreamRanges::Range& range = *request.add_range();
      range.set_start_token(span.first);
      range.set_end_token(span.last);
    }
    for (ShardId shard = 0; shard < shards_per_node_; shard++) {
      streams_.push_back(Stream{Address{transfer.to, shard}, request, false});
    }
  }
  if (streams_.empty()) return AppendStep(Entry::Kind::kReadNew);
  streams_started_at_ = env_.clock->Now();
  for (size_t i = 0; i < streams_.size(); i++) SendStream(i);
  ResendLater();
}

void OperationDriver::SendStream(size_t index) {
  CHARYBDIS_ASSERT(!streams_.at(index).done);
  Envelope message;
  *message.mutable_stream_ranges() = streams_[index].request;
  message.mutable_stream_ranges()->set_request_id(++last_request_id_);
  env_.network->Send(streams_[index].receiver, std::move(message));
}

void OperationDriver::ResendLater() {
  timer_ = env_.clock->After(kStreamResendInterval, [this] {
    timer_ = 0;
    CHARYBDIS_PROBE(env_.probes, "topology.driver_resends_streams");
    for (size_t i = 0; i < streams_.size(); i++) {
      if (!streams_[i].done) SendStream(i);
    }
    ResendLater();
  });
}

void OperationDriver::OnStreamDone(const Envelope& message) {
  const StreamRangesDone& done = message.stream_ranges_done();
  const Address receiver{message.from_node(), message.from_shard()};
  for (size_t i = 0; i < streams_.size(); i++) {
    Stream& stream = streams_[i];
    if (stream.done || !(stream.receiver == receiver) || stream.request.name() != done.name()) continue;
    if (!done.ok()) {
      // Still running (asked twice), or a pair that did not check out: the
      // next resend tells again; an operation that cannot stream is the
      // operator's to roll back.
      CHARYBDIS_PROBE(env_.probes, "topology.driver_stream_not_done");
      return;
    }
    stream.done = true;
    streams_done_++;
    pairs_streamed_ += done.pairs();
    bytes_streamed_ += done.bytes();
    CHARYBDIS_ASSERT(streams_done_ <= streams_.size());
    if (streams_done_ < streams_.size()) return;
    env_.clock->Cancel(timer_);
    timer_ = 0;
    CHARYBDIS_PROBE(env_.probes, "topology.driver_streamed");
    return AppendStep(Entry::Kind::kReadNew);
  }
}

void OperationDriver::AppendStep(Entry::Kind kind) {
  const Move& move = *log_.topology().move();
  Entry entry;
  entry.kind = kind;
  entry.operation = move.operation;
  entry.node = move.node;
  entry.replaced = move.replaced;
  const uint64_t version = working_version_;
  append_(std::move(entry), [this, kind, version](ClientResponse answer) {
    // Appended: the log grows and Drive takes the next stage. Refused or
    // failed: try again while the stage is still the one in hand.
    if (answer.code() == ClientResponse::OK || version != working_version_) return;
    CHARYBDIS_PROBE(env_.probes, "topology.driver_append_failed");
    timer_ = env_.clock->After(kRetryDelay, [this, kind, version] {
      timer_ = 0;
      if (version == working_version_ && log_.topology().version() == version) AppendStep(kind);
    });
  });
}

OperationDriver::Progress OperationDriver::progress() const {
  Progress progress{working_version_, barrier_passed_, streams_.size(), streams_done_, pairs_streamed_, bytes_streamed_};
  // As the streams done so far took: a rough guide, the streams differ.
  if (streams_done_ > 0 && streams_done_ < streams_.size()) {
    const Nanos elapsed = std::max<Nanos>(env_.clock->Now() - streams_started_at_, 0);
    progress.estimated_left =
        elapsed / static_cast<Nanos>(streams_done_) * static_cast<Nanos>(streams_.size() - streams_done_);
  }
  return progress;
}

void OperationDriver::Reset() {
  env_.clock->Cancel(timer_);
  timer_ = 0;
  working_version_ = 0;
  barrier_passed_ = false;
  barrier_waiting_.clear();
  streams_.clear();
  streams_done_ = 0;
  pairs_streamed_ = 0;
  bytes_streamed_ = 0;
}

}  // namespace charybdis::topology
