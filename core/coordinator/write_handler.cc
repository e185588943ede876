#include "core/coordinator/write_handler.h"

#include <algorithm>

#include "core/env/assert.h"
#include "core/env/buggify_actions.h"
#include "core/hints/hint_manager.h"

namespace charybdis {

WriteHandler::WriteHandler(CoordinatorContext& context, uint64_t id, Requirement requirement,
                           Token token, std::vector<NodeId> replicas, uint64_t topology_version, bool replay,
                           PartitionData mutation, Timestamp timestamp, Reply reply, std::function<void()> done,
                           Rerun rerun)
    : context_(context),
      id_(id),
      requirement_(std::move(requirement)),
      token_(token),
      replicas_(std::move(replicas)),
      mutation_(std::move(mutation)),
      timestamp_(timestamp),
      topology_version_(topology_version),
      replay_(replay),
      reply_(std::move(reply)),
      done_(std::move(done)),
      rerun_(std::move(rerun)) {
  CHARYBDIS_ASSERT(rerun_ != nullptr);
}

void WriteHandler::Start() {
  CHARYBDIS_ASSERT(id_ != 0);
  CHARYBDIS_ASSERT(!replicas_.empty());
  CHARYBDIS_ASSERT(pending_.empty());  // Start runs once, before any ack
  CHARYBDIS_ASSERT(acked_.empty());
  started_ = context_.env.clock->Now();
  for (NodeId replica : replicas_) {
    if (!context_.liveness.IsUp(replica)) {
      Hint(replica);
      continue;
    }
    Envelope message;
    ReplicaWrite* write = message.mutable_replica_write();
    write->set_request_id(id_);
    write->set_topology_version(topology_version_);
    write->set_replay(replay_);
    *write->mutable_mutation() = mutation_;
    pending_.push_back(replica);
    context_.metrics.replica_writes_sent++;
    // One replica may get the write well after the others.
    SendPerhapsLate(context_.env, "write_handler.replica_write_late",
                    context_.ReplicaAddress(replica, token_), std::move(message));
  }
  CHARYBDIS_ASSERT(pending_.size() <= replicas_.size());
  std::weak_ptr<WriteHandler> self = weak_from_this();
  const Nanos timeout = PerhapsShorter(context_.env, "write_handler.short_timeout",
                                       context_.config.coordinator.write_timeout);
  timer_ = context_.env.clock->After(timeout, [self] {
    if (auto handler = self.lock()) handler->OnTimeout();
  });
  MaybeReply();
  MaybeDone();
}

void WriteHandler::Hint(NodeId replica) {
  CHARYBDIS_ASSERT(std::find(replicas_.begin(), replicas_.end(), replica) != replicas_.end());
  if (!context_.config.coordinator.hinted_handoff) return;
  hints_in_flight_++;
  // Each replica is hinted at most once: down at the start, or silent at the timeout.
  CHARYBDIS_ASSERT(hints_stored_ + hints_in_flight_ <= replicas_.size());
  std::weak_ptr<WriteHandler> self = weak_from_this();
  context_.hints.Store(replica, mutation_, [self](bool stored) {
    if (auto handler = self.lock()) handler->OnHintStored(stored);
  });
}

void WriteHandler::OnHintStored(bool stored) {
  CHARYBDIS_ASSERT(hints_in_flight_ > 0);
  hints_in_flight_--;
  hints_stored_ += stored;
  CHARYBDIS_ASSERT(hints_stored_ + hints_in_flight_ <= replicas_.size());
  MaybeReply();
  MaybeDone();
}

void WriteHandler::OnWriteAck(NodeId replica, bool ok) {
  auto it = std::find(pending_.begin(), pending_.end(), replica);
  if (it == pending_.end()) return;  // a duplicate, or after the timeout
  if (!ok) return;                   // the replica's disk failed: it stays pending
  pending_.erase(it);
  CHARYBDIS_ASSERT(std::find(acked_.begin(), acked_.end(), replica) == acked_.end());
  acked_.push_back(replica);
  CHARYBDIS_ASSERT(acked_.size() <= replicas_.size());
  CHARYBDIS_ASSERT(acked_.size() + pending_.size() <= replicas_.size());
  MaybeReply();
  MaybeDone();
}

void WriteHandler::OnWriteFenced(NodeId replica, uint64_t fence) {
  auto it = std::find(pending_.begin(), pending_.end(), replica);
  if (it == pending_.end()) return;  // a duplicate, or after the timeout
  pending_.erase(it);  // no hint: it refused what was routed to it, and stays refusing
  CHARYBDIS_ASSERT(fence > topology_version_);  // what a replica refuses
  if (!replied_) {
    // The run again answers the client; this one only finishes its sends.
    // Writing the same mutation twice changes nothing: its keys are blind.
    replied_ = true;
    CHARYBDIS_PROBE(context_.env.probes, "write.rerun_after_fence");
    rerun_(fence, mutation_, timestamp_, requirement_.level(), reply_);
  }
  MaybeDone();
}

void WriteHandler::ReplyTimedOut(const std::string& why) {
  CHARYBDIS_ASSERT(!replied_);
  replied_ = true;
  context_.metrics.write_timeouts++;
  ClientResponse response;
  response.set_code(ClientResponse::WRITE_TIMEOUT);
  response.set_consistency(requirement_.level());
  response.set_received(requirement_.Counted(acked_));
  response.set_blocked_for(requirement_.blocked_for());
  response.set_write_type("SIMPLE");
  response.set_message(why);
  reply_(std::move(response));
}

void WriteHandler::MaybeReply() {
  if (replied_) return;
  const bool met = requirement_.level() == CL_ANY
                       ? acked_.size() + hints_stored_ >= 1
                       : requirement_.SatisfiedBy(acked_);
  if (!met) return;
  CHARYBDIS_ASSERT(acked_.size() + hints_stored_ >= 1);  // every level needs one
  CHARYBDIS_ASSERT(!timed_out_);  // a timeout answers first and sets replied_
  replied_ = true;
  const Nanos latency = context_.env.clock->Now() - started_;
  context_.metrics.write_latency_us.Record(std::max<Nanos>(latency, 0) / kMicrosecond);
  ClientResponse response;
  response.set_code(ClientResponse::OK);
  response.set_consistency(requirement_.level());
  response.set_write_timestamp(timestamp_);
  reply_(std::move(response));
}

void WriteHandler::OnTimeout() {
  CHARYBDIS_ASSERT(!timed_out_);  // its timer fires once
  timed_out_ = true;
  // Replicas that never answered get a hint, as in Cassandra.
  if (!pending_.empty()) CHARYBDIS_PROBE(context_.env.probes, "write.hint_on_timeout");
  for (NodeId replica : pending_) Hint(replica);
  if (!replied_) ReplyTimedOut("timed out waiting for replica acknowledgements");
  pending_.clear();
  CHARYBDIS_ASSERT(replied_);
  MaybeDone();
}

void WriteHandler::MaybeDone() {
  if (!done_) return;
  const bool all_answered = pending_.empty() || timed_out_;
  if (!replied_ || !all_answered || hints_in_flight_ > 0) return;
  CHARYBDIS_ASSERT(replied_);
  context_.env.clock->Cancel(timer_);
  auto done = std::move(done_);
  done_ = nullptr;
  if (done) done();  // may destroy this handler: nothing may follow
}

}  // namespace charybdis
