#include "core/coordinator/batch_handler.h"

#include <algorithm>

#include "core/env/assert.h"
#include "core/data/big_endian.h"

namespace charybdis {

BatchHandler::BatchHandler(CoordinatorContext& context, std::vector<PartitionData> mutations, Timestamp timestamp,
                           ConsistencyLevel level, std::vector<NodeId> log_nodes, RunMutation run_mutation,
                           Reply reply, std::function<void(const std::vector<uint64_t>& ids)> done)
    : context_(context), mutations_(std::move(mutations)), timestamp_(timestamp), level_(level),
      log_nodes_(std::move(log_nodes)), run_mutation_(std::move(run_mutation)), reply_(std::move(reply)),
      done_(std::move(done)) {
  CHARYBDIS_ASSERT(!mutations_.empty());
  CHARYBDIS_ASSERT(log_nodes_.empty() || mutations_.size() > 1);
  CHARYBDIS_ASSERT(run_mutation_ != nullptr);
  CHARYBDIS_ASSERT(reply_ != nullptr);
  CHARYBDIS_ASSERT(done_ != nullptr);  // Finish calls it unchecked
}

void BatchHandler::Start() {
  if (log_nodes_.empty()) return WriteMutations();
  id_ = context_.NextRequestId();
  context_.track(id_, shared_from_this());
  // Unique across nodes, shards and lives: the request id holds this
  // life's nonce.
  AppendBigEndian(batch_id_, context_.env.self.node, 4);
  AppendBigEndian(batch_id_, context_.env.self.shard, 4);
  AppendBigEndian(batch_id_, id_, 8);
  CHARYBDIS_ASSERT(id_ != 0);
  CHARYBDIS_ASSERT(batch_id_.size() == 16);  // Start runs once
  Envelope message;
  BatchlogStore* store = message.mutable_batchlog_store();
  store->set_request_id(id_);
  store->set_batch_id(batch_id_);
  store->mutable_entry()->set_timestamp(timestamp_);
  for (const PartitionData& mutation : mutations_) *store->mutable_entry()->add_mutation() = mutation;
  CHARYBDIS_ASSERT(static_cast<size_t>(store->entry().mutation_size()) == mutations_.size());
  context_.metrics.batches_logged++;
  for (NodeId node : log_nodes_) context_.env.network->Send(Address{node, 0}, message);
  std::weak_ptr<BatchHandler> self = weak_from_this();
  log_timer_ = context_.env.clock->After(context_.config.coordinator.write_timeout, [self] {
    if (auto handler = self.lock()) handler->OnLogTimeout();
  });
}

void BatchHandler::OnWriteAck(NodeId node, bool ok) {
  if (finished_ || writing_ || std::find(log_nodes_.begin(), log_nodes_.end(), node) == log_nodes_.end()) return;
  CHARYBDIS_ASSERT(id_ != 0);  // a log node's ack: Start logged the batch
  // A node that could not store it leaves the log short: the batch is not
  // written, and the client hears a failed batch log write at once.
  if (!ok) return OnLogTimeout();
  logged_.insert(node);
  CHARYBDIS_ASSERT(logged_.size() <= log_nodes_.size());
  if (logged_.size() == log_nodes_.size()) {
    context_.env.clock->Cancel(log_timer_);
    WriteMutations();
  }
}

void BatchHandler::OnLogTimeout() {
  if (finished_ || writing_) return;
  CHARYBDIS_ASSERT(!log_nodes_.empty());
  // Once every node logged it the mutations are writing.
  CHARYBDIS_ASSERT(logged_.size() < log_nodes_.size());
  ClientResponse timeout;
  timeout.set_code(ClientResponse::WRITE_TIMEOUT);
  timeout.set_consistency(level_);
  timeout.set_received(static_cast<uint32_t>(logged_.size()));
  timeout.set_blocked_for(static_cast<uint32_t>(log_nodes_.size()));
  timeout.set_write_type("BATCH_LOG");
  timeout.set_message("timed out storing the batch in the batch log");
  Finish(std::move(timeout));
}

void BatchHandler::WriteMutations() {
  CHARYBDIS_ASSERT(!writing_);  // once, from Start or the last log ack
  CHARYBDIS_ASSERT(!finished_);
  CHARYBDIS_ASSERT(!mutations_.empty());
  writing_ = true;
  unwritten_ = mutations_.size();
  std::vector<PartitionData> mutations = std::move(mutations_);
  CHARYBDIS_ASSERT(mutations.size() == unwritten_);
  for (PartitionData& mutation : mutations) {
    run_mutation_(std::move(mutation), timestamp_, level_, [self = shared_from_this()](ClientResponse response) {
      self->OnMutationWritten(std::move(response));
    });
  }
}

void BatchHandler::OnMutationWritten(ClientResponse response) {
  CHARYBDIS_ASSERT(writing_);
  CHARYBDIS_ASSERT(unwritten_ > 0);
  // Each part answers once; a log timeout finishes only before writing.
  CHARYBDIS_ASSERT(!finished_);
  unwritten_--;
  if (response.code() != ClientResponse::OK && !failure_) {
    // A logged batch is in the batch log, which finishes it: whatever kept
    // a part from its level (even replicas found down since the batch was
    // checked), the client must not read it as "nothing was written".
    if (!log_nodes_.empty() && response.code() == ClientResponse::UNAVAILABLE) {
      response.set_code(ClientResponse::WRITE_TIMEOUT);
      response.set_received(response.alive());
      response.set_message("a part of the logged batch met too few live replicas; the batch log applies it later");
    }
    if (response.code() == ClientResponse::WRITE_TIMEOUT) {
      response.set_write_type(log_nodes_.empty() ? "UNLOGGED_BATCH" : "BATCH");
    }
    failure_ = std::move(response);
  }
  if (unwritten_ > 0 || finished_) return;
  if (failure_) return Finish(*std::move(failure_));
  CHARYBDIS_ASSERT(unwritten_ == 0);
  CHARYBDIS_ASSERT(!failure_);
  // Applied at the level: the batch log's nodes may forget it.
  Envelope remove;
  remove.mutable_batchlog_remove()->set_batch_id(batch_id_);
  for (NodeId node : log_nodes_) context_.env.network->Send(Address{node, 0}, remove);
  ClientResponse ok;
  ok.set_code(ClientResponse::OK);
  ok.set_write_timestamp(timestamp_);
  Finish(std::move(ok));
}

void BatchHandler::Finish(ClientResponse response) {
  CHARYBDIS_ASSERT(!finished_);
  CHARYBDIS_ASSERT(done_ != nullptr);
  CHARYBDIS_ASSERT(response.code() != ClientResponse::OK || writing_);  // OK once all parts were written
  finished_ = true;
  context_.env.clock->Cancel(log_timer_);
  reply_(std::move(response));
  auto done = std::move(done_);
  done(id_ == 0 ? std::vector<uint64_t>{} : std::vector<uint64_t>{id_});  // may destroy this handler
}

}  // namespace charybdis
