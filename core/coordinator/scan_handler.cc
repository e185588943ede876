#include "core/coordinator/scan_handler.h"

#include <algorithm>
#include <limits>

#include "core/env/assert.h"
#include "core/env/probe.h"
#include "core/request/result_rows.h"
#include "core/data/partition.h"

namespace charybdis {

namespace {

constexpr Token kMaximumToken = std::numeric_limits<Token>::max();
// Rows a replica shard sends per round at most: bounds a message, however
// many rows the scan wants (a COUNT, a SELECT without paging).
constexpr uint32_t kRowsPerRound = 5000;
// Between attempts to finish a partition's Paxos round (read_executor.cc's).
constexpr Nanos kFinishPaxosRetryDelay = 20 * kMillisecond;

// The last token of the vnode range that holds `token`: the first vnode
// token at or after it, or the top of the ring in the range that wraps.
Token RangeEndOf(const TokenRing& ring, Token token) {
  const auto& tokens = ring.tokens();
  auto it = std::lower_bound(tokens.begin(), tokens.end(), token,
                             [](const TokenRing::VnodeToken& vnode, Token t) { return vnode.token < t; });
  CHARYBDIS_ASSERT(it == tokens.end() || it->token >= token);
  return it == tokens.end() ? kMaximumToken : it->token;
}

}  // namespace

ScanHandler::ScanHandler(CoordinatorContext& context, std::shared_ptr<const TokenRing> ring, uint64_t topology_version,
                         Requirement requirement, ScanOp scan, TargetsOf targets_of, Reply reply, Rerun rerun,
                         std::function<void(const std::vector<uint64_t>& ids)> done)
    : context_(context),
      ring_(std::move(ring)),
      topology_version_(topology_version),
      requirement_(std::move(requirement)),
      scan_(std::move(scan)),
      targets_of_(std::move(targets_of)),
      reply_(std::move(reply)),
      rerun_(std::move(rerun)),
      done_(std::move(done)),
      position_(scan_) {
  CHARYBDIS_ASSERT(rerun_ != nullptr);
  CHARYBDIS_ASSERT(scan_.limit() >= 1);
  CHARYBDIS_ASSERT(scan_.start_token() <= scan_.end_token());
  CHARYBDIS_ASSERT(requirement_.blocked_for() >= 1);
  CHARYBDIS_ASSERT(ring_ != nullptr);
  CHARYBDIS_ASSERT(done_ != nullptr);  // Finish calls it unchecked
}

void ScanHandler::Start() {
  CHARYBDIS_ASSERT(!finished_);
  CHARYBDIS_ASSERT(ids_.empty());  // Start runs once
  result_.set_code(ClientResponse::OK);
  NextRound();
}

void ScanHandler::NextRound() {
  CHARYBDIS_ASSERT(!finished_);
  CHARYBDIS_ASSERT(taken_ <= scan_.limit());
  context_.env.clock->Cancel(timeout_timer_);
  const bool range_done = !position_.resume() && position_.start_token() >= scan_.end_token();
  if (range_done || taken_ >= scan_.limit()) return Finish(std::move(result_));
  // The first token this round may hold: the resumed row's own, or the one
  // after the start.
  const Token first = position_.resume() ? position_.start_token() : position_.start_token() + 1;
  round_end_ = std::min(RangeEndOf(*ring_, first), scan_.end_token());
  CHARYBDIS_ASSERT(round_end_ >= first);
  const std::vector<NodeId> targets = targets_of_(ring_->ReplicasOf(first));
  if (targets.size() < requirement_.blocked_for()) {
    context_.metrics.read_unavailable++;
    ClientResponse unavailable;
    unavailable.set_code(ClientResponse::UNAVAILABLE);
    unavailable.set_consistency(requirement_.level());
    unavailable.set_alive(static_cast<uint32_t>(targets.size()));
    unavailable.set_blocked_for(requirement_.blocked_for());
    unavailable.set_message("not enough live replicas for a vnode range of the scan");
    return Finish(std::move(unavailable));
  }
  CHARYBDIS_ASSERT(targets.size() >= requirement_.blocked_for());
  // A new id: answers of the last round still on the wire must not count.
  id_ = context_.NextRequestId();
  CHARYBDIS_ASSERT(id_ != 0);
  ids_.push_back(id_);
  context_.track(id_, shared_from_this());
  asked_.clear();
  answers_.clear();
  Envelope message;
  ReplicaScan* request = message.mutable_replica_scan();
  request->set_request_id(id_);
  request->set_topology_version(topology_version_);
  *request->mutable_scan() = position_;
  request->mutable_scan()->set_end_token(round_end_);
  request->mutable_scan()->set_limit(std::min(kRowsPerRound, scan_.limit() - taken_));
  for (size_t i = 0; i < requirement_.blocked_for(); i++) {
    for (ShardId shard = 0; shard < context_.config.shards; shard++) {
      const Address source{targets[i], shard};
      asked_.insert(source);
      context_.env.network->Send(source, message);
    }
  }
  CHARYBDIS_ASSERT(asked_.size() <= size_t{requirement_.blocked_for()} * context_.config.shards);
  std::weak_ptr<ScanHandler> self = weak_from_this();
  timeout_timer_ = context_.env.clock->After(context_.config.coordinator.read_timeout, [self] {
    if (auto handler = self.lock()) handler->OnTimeout();
  });
}

void ScanHandler::OnScanResponse(const Address& from, const ReplicaScanResponse& response) {
  if (finished_ || response.request_id() != id_ || !asked_.count(from) || answers_.count(from)) return;
  CHARYBDIS_ASSERT(id_ != 0);
  if (!response.ok() && response.fence() != 0) return FinishFenced(response.fence());
  if (!response.ok()) {
    context_.metrics.read_failures++;
    ClientResponse failure;
    failure.set_code(ClientResponse::READ_FAILURE);
    failure.set_consistency(requirement_.level());
    failure.set_blocked_for(requirement_.blocked_for());
    failure.set_failures(1);
    failure.set_message("a replica could not read its part of the scan");
    return Finish(std::move(failure));
  }
  answers_.emplace(from, response);
  CHARYBDIS_ASSERT(answers_.size() <= asked_.size());  // only those asked answer
  if (answers_.size() == asked_.size()) Collected();
}

void ScanHandler::Collected() {
  CHARYBDIS_ASSERT(!finished_);
  CHARYBDIS_ASSERT(!answers_.empty());
  CHARYBDIS_ASSERT(answers_.size() == asked_.size());
  if (!round_finished_paxos_) {
    std::set<std::string> in_progress;
    for (const auto& [source, answer] : answers_) in_progress.insert(answer.paxos_in_progress().begin(), answer.paxos_in_progress().end());
    if (!in_progress.empty()) return FinishPaxosThenRerunRound(std::move(in_progress));
  }
  round_finished_paxos_ = false;  // the next round asks again
  // Whole up to the smallest last row of the sources that stopped early.
  std::optional<RowPosition> covered;
  for (const auto& [source, answer] : answers_) {
    if (answer.exhausted()) continue;
    const RowPosition last{answer.last_token(), answer.last_partition_key(), answer.last_clustering_key()};
    if (!covered || last < *covered) covered = last;
  }
  TakeRows(covered);
  if (taken_ >= scan_.limit()) return Finish(std::move(result_));
  if (covered) {
    // A source stops early only after sending a row past the position, so
    // every round moves on.
    const RowPosition from{position_.start_token(), position_.after_partition_key(), position_.after_clustering_key()};
    CHARYBDIS_ASSERT(position_.resume() ? *covered > from : std::get<0>(*covered) > position_.start_token());
    position_.set_resume(true);
    position_.set_start_token(std::get<0>(*covered));
    position_.set_after_partition_key(std::get<1>(*covered));
    position_.set_after_clustering_key(std::get<2>(*covered));
  } else {
    position_.set_resume(false);
    position_.set_start_token(round_end_);
  }
  NextRound();
}

void ScanHandler::FinishPaxosThenRerunRound(std::set<std::string> partition_keys) {
  CHARYBDIS_ASSERT(!partition_keys.empty());
  CHARYBDIS_ASSERT(finishing_.empty());
  CHARYBDIS_PROBE(context_.env.probes, "scan.finish_paxos_first");
  // Answers of this round still on the wire must not count (none is asked
  // now; the rerun takes a new id). Its id stays tracked: the coordinator's
  // table of requests may be what keeps this handler alive. The timeout
  // still runs and answers the client if finishing takes too long.
  asked_.clear();
  answers_.clear();
  finishing_ = std::move(partition_keys);
  for (const std::string& partition_key : std::set<std::string>(finishing_)) FinishPaxos(partition_key);
}

void ScanHandler::FinishPaxos(const std::string& partition_key) {
  std::weak_ptr<ScanHandler> self = weak_from_this();
  context_.finish_paxos(TokenOf(partition_key), scan_.table(), partition_key, [self, partition_key](bool ok) {
    auto handler = self.lock();
    if (!handler || handler->finished_ || !handler->finishing_.count(partition_key)) return;
    if (!ok) {
      // Lost to other proposers or timed out: again while the scan has time.
      handler->context_.env.clock->After(kFinishPaxosRetryDelay, [self, partition_key] {
        auto again = self.lock();
        if (again && !again->finished_ && again->finishing_.count(partition_key)) again->FinishPaxos(partition_key);
      });
      return;
    }
    handler->finishing_.erase(partition_key);
    if (!handler->finishing_.empty()) return;
    handler->round_finished_paxos_ = true;
    handler->NextRound();  // the same position: the round runs again
  });
}

void ScanHandler::TakeRows(const std::optional<RowPosition>& covered) {
  CHARYBDIS_ASSERT(taken_ <= scan_.limit());
  CHARYBDIS_ASSERT(static_cast<uint32_t>(result_.rows_size()) <= taken_);
  std::map<std::pair<Token, std::string>, Partition> merged;
  for (const auto& [source, answer] : answers_) {
    for (const PartitionData& data : answer.partitions()) {
      merged[{TokenOf(data.partition_key()), data.partition_key()}].Merge(Partition::FromProto(data));
    }
  }
  const Timestamp now = context_.env.clock->Now() / kMicrosecond;
  for (auto& [key, partition] : merged) {
    const auto& [token, partition_key] = key;
    // Rows past the coverage may lack versions a source has not sent yet.
    for (auto row = partition.rows.begin(); row != partition.rows.end();) {
      const bool beyond = covered && RowPosition{token, partition_key, row->first} > *covered;
      row = beyond ? partition.rows.erase(row) : std::next(row);
    }
    ClientResponse visible;
    AddVisibleRows(partition, now, nullptr, ReadColumns(scan_.column()), visible);
    for (ResultRow& row : *visible.mutable_rows()) {
      if (taken_ >= scan_.limit()) return;
      taken_++;
      if (scan_.count_only()) continue;
      row.set_partition_key(partition_key);
      *result_.add_rows() = std::move(row);
    }
  }
}

void ScanHandler::OnTimeout() {
  if (finished_) return;
  context_.metrics.read_timeouts++;
  ClientResponse timeout;
  timeout.set_code(ClientResponse::READ_TIMEOUT);
  timeout.set_consistency(requirement_.level());
  timeout.set_blocked_for(requirement_.blocked_for());
  // Answers count per replica node, as the level does: a node answered
  // when every shard asked of it did.
  std::map<NodeId, size_t> shards_answered;
  for (const auto& [source, answer] : answers_) shards_answered[source.node]++;
  uint32_t received = 0;
  for (const auto& [node, shards] : shards_answered) received += shards == context_.config.shards;
  CHARYBDIS_ASSERT(received <= requirement_.blocked_for());  // of the nodes asked
  timeout.set_received(received);
  timeout.set_data_present(received > 0);
  timeout.set_message("timed out waiting for replica answers to a scan");
  Finish(std::move(timeout));
}

void ScanHandler::Finish(ClientResponse response) {
  CHARYBDIS_ASSERT(!finished_);
  CHARYBDIS_ASSERT(taken_ <= scan_.limit());
  finished_ = true;
  if (response.code() == ClientResponse::OK) response.set_row_count(taken_);
  context_.env.clock->Cancel(timeout_timer_);
  reply_(std::move(response));
  auto done = std::move(done_);
  done(ids_);  // may destroy this handler: nothing may follow
}

void ScanHandler::FinishFenced(uint64_t fence) {
  CHARYBDIS_ASSERT(!finished_);
  CHARYBDIS_ASSERT(fence > topology_version_);  // what a replica refuses
  finished_ = true;
  context_.env.clock->Cancel(timeout_timer_);
  CHARYBDIS_PROBE(context_.env.probes, "scan.rerun_after_fence");
  rerun_(fence);
  auto done = std::move(done_);
  done(ids_);  // may destroy this handler: nothing may follow
}

}  // namespace charybdis
