#include "core/replica/range_cleanup.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "core/replica/stream_source.h"
#include "core/topology/cleanup_plan.h"

namespace charybdis {

namespace {

// Between batches, as if each took long: a topology change or a stream
// then lands in the middle of a cleanup.
constexpr Nanos kBuggifyBatchPause = 200 * kMillisecond;

bool InSpans(const std::string& paxos_key, const std::string& table, const std::vector<topology::TokenSpan>& spans) {
  return std::any_of(spans.begin(), spans.end(), [&](const topology::TokenSpan& span) {
    return IsPaxosKeyInRange(paxos_key, table, span.first, span.last);
  });
}

}  // namespace

RangeCleanup::RangeCleanup(ShardEnv env, const topology::TopologyLog& log, Tables tables, Streaming streaming,
                           ShardMetrics& metrics)
    : env_(env), log_(log), tables_(std::move(tables)), streaming_(std::move(streaming)), metrics_(metrics) {
  CHARYBDIS_ASSERT(tables_ != nullptr && streaming_ != nullptr);
}

void RangeCleanup::OnRequest(const Envelope& message) {
  CHARYBDIS_ASSERT(message.has_shard_cleanup() && message.from_node() == env_.self.node);
  const ShardCleanup& request = message.shard_cleanup();
  Envelope refusal;
  ShardCleanupDone& done = *refusal.mutable_shard_cleanup_done();
  done.set_request_id(request.request_id());
  const Address requester{message.from_node(), message.from_shard()};
  if (run_.has_value()) {
    done.set_error(absl::StrCat("shard ", env_.self.shard, " is already cleaning up"));
    return env_.network->Send(requester, std::move(refusal));
  }
  if (log_.topology().version() != request.topology_version()) {
    done.set_error(absl::StrCat("shard ", env_.self.shard, " holds topology version ", log_.topology().version(),
                                ", not ", request.topology_version(), ": run the cleanup again"));
    return env_.network->Send(requester, std::move(refusal));
  }
  absl::StatusOr<std::vector<Part>> parts = PlanParts();
  if (!parts.ok()) {
    done.set_error(std::string(parts.status().message()));
    return env_.network->Send(requester, std::move(refusal));
  }
  CHARYBDIS_PROBE(env_.probes, "cleanup.shard_started");
  run_ = Run{requester, request.request_id(), request.topology_version(), *std::move(parts)};
  Next();
}

absl::StatusOr<std::vector<RangeCleanup::Part>> RangeCleanup::PlanParts() const {
  std::vector<Part> parts;
  for (const auto& [table, replication] : tables_()) {
    absl::StatusOr<std::vector<topology::TokenSpan>> spans =
        topology::SpansToCleanUp(log_.topology(), replication, env_.self.node);
    if (!spans.ok()) return spans.status();
    if (spans->empty()) continue;  // the node replicates every token
    parts.push_back(Part{table, /*paxos=*/false, *spans});
    parts.push_back(Part{table, /*paxos=*/true, *std::move(spans)});
  }
  return parts;
}

std::string RangeCleanup::Unsafe() const {
  CHARYBDIS_ASSERT(run_.has_value());
  if (log_.topology().version() != run_->version) {
    return absl::StrCat("the topology moved from version ", run_->version, " to ", log_.topology().version(),
                        " during the cleanup: run it again once no operation is in progress");
  }
  if (streaming_()) return absl::StrCat("a stream came into shard ", env_.self.shard, " during the cleanup");
  return "";
}

void RangeCleanup::Next() {
  CHARYBDIS_ASSERT(run_.has_value());
  if (run_->part == run_->parts.size()) return Finish("");
  if (std::string unsafe = Unsafe(); !unsafe.empty()) return Finish(unsafe);
  const Part& part = run_->parts[run_->part];
  CHARYBDIS_ASSERT(part.span < part.spans.size());
  const StoredRange range = part.paxos ? PaxosStatesOf(part.table)
                                       : StoredRangeOf(part.table, part.spans[part.span].first,
                                                       part.spans[part.span].last);
  // Keys are unique: the first after `after` is after + 0x00.
  const std::string begin = run_->after.empty() ? range.begin : std::max(range.begin, run_->after + '\0');
  env_.storage->Scan(begin, range.end, kBatchPairs,
                     [this](absl::StatusOr<std::vector<KeyValue>> scanned) { OnScanned(std::move(scanned)); });
}

void RangeCleanup::OnScanned(absl::StatusOr<std::vector<KeyValue>> scanned) {
  CHARYBDIS_ASSERT(run_.has_value());
  if (!scanned.ok()) return Finish(absl::StrCat("storage: ", scanned.status().message()));
  CHARYBDIS_ASSERT(scanned->size() <= kBatchPairs);
  // Checked again: the scan took time, and the topology may have moved.
  if (std::string unsafe = Unsafe(); !unsafe.empty()) return Finish(unsafe);
  const Part& part = run_->parts[run_->part];
  WriteBatch batch;
  uint64_t bytes = 0;
  for (const KeyValue& pair : *scanned) {
    if (part.paxos && !InSpans(pair.key, part.table, part.spans)) continue;
    bytes += pair.key.size() + pair.value.size();
    batch.Delete(pair.key);
  }
  Advance(*scanned);
  if (batch.operations.empty()) return env_.reactor->Post([this] { Next(); });
  const uint64_t pairs = batch.operations.size();
  env_.storage->Apply(std::move(batch), Durability::kSynced, [this, pairs, bytes](absl::Status applied) {
    CHARYBDIS_ASSERT(run_.has_value());
    if (!applied.ok()) return Finish(absl::StrCat("storage: ", applied.message()));
    CHARYBDIS_PROBE(env_.probes, "cleanup.pairs_removed");
    run_->pairs += pairs;
    run_->bytes += bytes;
    metrics_.cleanup_pairs_removed += pairs;
    metrics_.cleanup_bytes_removed += bytes;
    if (!env_.buggify->Fires("cleanup.batch_paused")) return Next();
    env_.clock->After(kBuggifyBatchPause, [this] { Next(); });
  });
}

void RangeCleanup::Advance(const std::vector<KeyValue>& scanned) {
  Part& part = run_->parts[run_->part];
  if (scanned.size() == kBatchPairs) {
    run_->after = scanned.back().key;
    return;
  }
  // The range holds no more.
  run_->after.clear();
  if (!part.paxos && ++part.span < part.spans.size()) return;
  run_->part++;
}

void RangeCleanup::Finish(const std::string& error) {
  CHARYBDIS_ASSERT(run_.has_value());
  if (!error.empty()) CHARYBDIS_PROBE(env_.probes, "cleanup.shard_stopped");
  Envelope answer;
  ShardCleanupDone& done = *answer.mutable_shard_cleanup_done();
  done.set_request_id(run_->request_id);
  done.set_ok(error.empty());
  done.set_error(error);
  done.set_pairs(run_->pairs);
  done.set_bytes(run_->bytes);
  const Address requester = run_->requester;
  run_.reset();
  env_.network->Send(requester, std::move(answer));
}

}  // namespace charybdis
