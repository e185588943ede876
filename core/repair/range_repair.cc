#include "core/repair/range_repair.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/data/storage_codec.h"
#include "core/env/assert.h"

namespace charybdis::repair {

namespace {

// Between rounds, as if each took long.
constexpr Nanos kBuggifyRoundPause = 200 * kMillisecond;
// Rounds of a few rows, so that a small table takes many.
constexpr uint32_t kBuggifyRoundRows = 2;

using RowId = std::pair<std::string, std::string>;  // partition key, clustering key

// The clients' reads, writes and LWTs the shard coordinated since it
// started. Not those it served as a replica: a replica's backlog of
// writes long acknowledged says nothing of clients waiting now.
uint64_t ForegroundRequests(const ShardMetrics& metrics) {
  return metrics.coordinator_reads + metrics.coordinator_writes + metrics.cas_total_operations;
}

bool SameAnswer(const RepairHashes& a, const RepairHashes& b) {
  return a.rows() == b.rows() && a.hash() == b.hash() && a.exhausted() == b.exhausted() &&
         a.last_partition_key() == b.last_partition_key() && a.last_clustering_key() == b.last_clustering_key();
}

}  // namespace

RangeRepair::RangeRepair(ShardEnv env, const topology::TopologyLog& log, Tables tables, FinishRound finish_round,
                         ShardMetrics& metrics)
    : env_(env), log_(log), tables_(std::move(tables)), finish_round_(std::move(finish_round)), metrics_(metrics) {
  CHARYBDIS_ASSERT(tables_ != nullptr && finish_round_ != nullptr);
}

void RangeRepair::OnRequest(const Envelope& message) {
  CHARYBDIS_ASSERT(message.has_shard_repair() && message.from_node() == env_.self.node);
  const ShardRepair& request = message.shard_repair();
  Envelope refusal;
  ShardRepairDone& done = *refusal.mutable_shard_repair_done();
  done.set_request_id(request.request_id());
  const Address requester{message.from_node(), message.from_shard()};
  if (run_.has_value()) {
    done.set_error(absl::StrCat("shard ", env_.self.shard, " is already repairing"));
    return env_.network->Send(requester, std::move(refusal));
  }
  if (log_.topology().version() != request.topology_version()) {
    done.set_error(absl::StrCat("shard ", env_.self.shard, " holds topology version ", log_.topology().version(),
                                ", not ", request.topology_version(), ": run the repair again"));
    return env_.network->Send(requester, std::move(refusal));
  }
  absl::StatusOr<std::vector<Part>> parts = PlanParts(request.repair());
  if (!parts.ok()) {
    done.set_error(std::string(parts.status().message()));
    return env_.network->Send(requester, std::move(refusal));
  }
  run_ = Run{requester, request.request_id(), request.topology_version(), *std::move(parts)};
  if (env_.buggify->Fires("repair.small_rounds")) {
    run_->small_rounds = true;
    run_->round_rows = kBuggifyRoundRows;
  }
  Next();
}

absl::StatusOr<std::vector<RangeRepair::Part>> RangeRepair::PlanParts(const RepairOp& request) const {
  std::vector<Part> parts;
  for (const auto& [table, replication] : TablesToRepair(tables_(), request)) {
    absl::StatusOr<std::vector<RepairRange>> ranges =
        RangesToRepair(log_.topology(), replication, env_.self.node, request);
    if (!ranges.ok()) return ranges.status();
    for (RepairRange& range : *ranges) parts.push_back(Part{table, std::move(range)});
  }
  return parts;
}

void RangeRepair::Next() {
  CHARYBDIS_ASSERT(run_.has_value());
  if (run_->part == run_->parts.size()) return Finish("");
  if (log_.topology().version() != run_->version) {
    return Finish(absl::StrCat("the topology moved from version ", run_->version, " to ",
                               log_.topology().version(),
                               " during the repair: run it again once no operation is in progress"));
  }
  if (run_->part_began_us > 0) return SendHashRequests(/*each_row=*/false);
  run_->part_began_us = env_.clock->Now() / kMicrosecond;
  FencePaxos();
}

void RangeRepair::FencePaxos() {
  const Part& part = run_->parts[run_->part];
  const std::set<NodeId> replicas(part.range.replicas.begin(), part.range.replicas.end());
  run_->unfinished.clear();
  Send(Step::kFence, replicas, [&](NodeId, Envelope& message) {
    PaxosFence& fence = *message.mutable_paxos_fence();
    fence.set_request_id(run_->step_id);
    fence.set_table(part.table);
    fence.set_first_token(part.range.span.first);
    fence.set_last_token(part.range.span.last);
    fence.set_fence_us(run_->part_began_us);
  });
}

void RangeRepair::OnFenced(const Envelope& message) {
  const PaxosFenced& answer = message.paxos_fenced();
  if (!Answers(message, Step::kFence, answer.request_id())) return;
  if (!answer.ok()) {
    return Finish(absl::StrCat("node ", message.from_node(), " could not fence the Paxos state of ",
                               Describe(run_->parts[run_->part])));
  }
  for (const std::string& partition_key : answer.unfinished_partition_keys()) run_->unfinished.insert(partition_key);
  if (!run_->waiting.empty()) return;
  run_->step = Step::kFinishRounds;
  run_->step_id = ++last_step_id_;
  FinishRounds();
}

void RangeRepair::FinishRounds() {
  CHARYBDIS_ASSERT(run_.has_value() && run_->step == Step::kFinishRounds);
  if (run_->unfinished.empty()) return SendHashRequests(/*each_row=*/false);
  const Part& part = run_->parts[run_->part];
  const std::string partition_key = *run_->unfinished.begin();
  run_->unfinished.erase(run_->unfinished.begin());
  // One at a time: they are few (rounds a proposer left), and each is a
  // round of Paxos among the partition's replicas.
  finish_round_(part.table, partition_key, [this, id = run_->step_id, partition_key](bool ok) {
    if (!run_.has_value() || run_->step_id != id) return;
    if (!ok) {
      return Finish(absl::StrCat("could not finish the Paxos round of a partition of ",
                                 Describe(run_->parts[run_->part]), " (token ", TokenOf(partition_key),
                                 "): too few replicas answered"));
    }
    CHARYBDIS_PROBE(env_.probes, "repair.paxos_round_finished");
    run_->summary.set_paxos_rounds_finished(run_->summary.paxos_rounds_finished() + 1);
    metrics_.repair_paxos_rounds_finished++;
    FinishRounds();
  });
}

void RangeRepair::Send(Step step, const std::set<NodeId>& to, const std::function<void(NodeId, Envelope&)>& fill) {
  CHARYBDIS_ASSERT(run_.has_value() && !to.empty());
  run_->step = step;
  run_->step_id = ++last_step_id_;
  run_->waiting = to;
  for (NodeId replica : to) {
    Envelope request;
    fill(replica, request);
    env_.network->Send(Address{replica, env_.self.shard}, std::move(request));
  }
  env_.clock->After(kAnswerTimeout, [this, id = run_->step_id] {
    if (!run_.has_value() || run_->step_id != id || run_->waiting.empty()) return;
    Finish(absl::StrCat("node ", *run_->waiting.begin(), " did not answer within ", kAnswerTimeout / kSecond,
                        " s while repairing ", Describe(run_->parts[run_->part])));
  });
}

void RangeRepair::SendHashRequests(bool each_row) {
  const Part& part = run_->parts[run_->part];
  if (!each_row) {
    run_->round_began = env_.clock->Now();
    run_->foreground_then = ForegroundRequests(metrics_);
  }
  run_->hashes.clear();
  RepairHashRequest request;
  request.set_table(part.table);
  // ScanOp's start is exclusive; no key has the minimum token.
  const Token first = part.range.span.first;
  request.set_start_token(first == std::numeric_limits<Token>::min() ? first : first - 1);
  request.set_end_token(part.range.span.last);
  if (run_->after.has_value()) {
    request.set_resume(true);
    request.set_after_partition_key(run_->after->first);
    request.set_after_clustering_key(run_->after->second);
  }
  request.set_max_rows(run_->round_rows);
  request.set_each_row(each_row);
  const std::set<NodeId> replicas(part.range.replicas.begin(), part.range.replicas.end());
  Send(each_row ? Step::kRowHashes : Step::kHashes, replicas, [&](NodeId, Envelope& message) {
    *message.mutable_repair_hash_request() = request;
    message.mutable_repair_hash_request()->set_request_id(run_->step_id);
  });
}

bool RangeRepair::Answers(const Envelope& message, Step step, uint64_t request_id) {
  if (!run_.has_value() || run_->step != step || run_->step_id != request_id) return false;  // late, or duplicated
  if (message.from_shard() != env_.self.shard) return false;
  return run_->waiting.erase(message.from_node()) == 1;
}

void RangeRepair::OnHashes(const Envelope& message) {
  const RepairHashes& answer = message.repair_hashes();
  const Step step = run_.has_value() ? run_->step : Step::kHashes;
  if (step != Step::kHashes && step != Step::kRowHashes) return;
  if (!Answers(message, step, answer.request_id())) return;
  if (!answer.ok()) {
    return Finish(absl::StrCat("node ", message.from_node(), " could not read its rows of ",
                               Describe(run_->parts[run_->part])));
  }
  run_->hashes[message.from_node()] = answer;
  if (run_->waiting.empty()) OnAllHashes();
}

void RangeRepair::OnAllHashes() {
  CHARYBDIS_ASSERT(!run_->hashes.empty());
  if (run_->step == Step::kRowHashes) return CompareRows();
  const RepairHashes& first = run_->hashes.begin()->second;
  const bool agree = std::all_of(run_->hashes.begin(), run_->hashes.end(),
                                 [&](const auto& answer) { return SameAnswer(answer.second, first); });
  run_->round_agreed = agree;
  if (!agree) return SendHashRequests(/*each_row=*/true);
  run_->summary.set_rows_compared(run_->summary.rows_compared() + first.rows());
  metrics_.repair_rows_compared += first.rows();
  if (first.exhausted()) return EndRound(std::nullopt);
  EndRound(RowId{first.last_partition_key(), first.last_clustering_key()});
}

void RangeRepair::CompareRows() {
  const Part& part = run_->parts[run_->part];
  // The round ends at the smallest last row of a replica whose range goes
  // on: every replica hashed all its rows up to there.
  std::optional<std::string> end_key;
  std::optional<RowId> end;
  for (const auto& [replica, answer] : run_->hashes) {
    if (answer.exhausted()) continue;
    std::string key = storage_codec::RowPrefix(part.table, answer.last_partition_key(), answer.last_clustering_key());
    if (end_key.has_value() && *end_key <= key) continue;
    end_key = std::move(key);
    end = RowId{answer.last_partition_key(), answer.last_clustering_key()};
  }
  std::map<std::string, DifferingRow> rows;
  for (const auto& [replica, answer] : run_->hashes) {
    for (const RowHash& hashed : answer.row()) {
      std::string key = hashed.range_tombstones()
                            ? storage_codec::RangeTombstonePrefix(part.table, hashed.partition_key())
                            : storage_codec::RowPrefix(part.table, hashed.partition_key(), hashed.clustering_key());
      if (end_key.has_value() && key > *end_key) continue;
      DifferingRow& row = rows[std::move(key)];
      row.partition_key = hashed.partition_key();
      row.clustering_key = hashed.clustering_key();
      row.range_tombstones = hashed.range_tombstones();
      row.hashes[replica] = hashed.hash();
    }
  }
  run_->summary.set_rows_compared(run_->summary.rows_compared() + rows.size());
  metrics_.repair_rows_compared += rows.size();
  std::erase_if(rows, [&](const auto& row) {
    const std::map<NodeId, uint64_t>& hashes = row.second.hashes;
    return hashes.size() == part.range.replicas.size() &&
           std::all_of(hashes.begin(), hashes.end(),
                       [&](const auto& hash) { return hash.second == hashes.begin()->second; });
  });
  if (rows.empty()) return EndRound(end);  // what differed was written in between
  CHARYBDIS_PROBE(env_.probes, "repair.rows_differed");
  run_->summary.set_rows_differing(run_->summary.rows_differing() + rows.size());
  metrics_.repair_rows_differing += rows.size();
  run_->differing = std::move(rows);
  run_->round_end = std::move(end);
  FetchDiffering();
}

void RangeRepair::FetchDiffering() {
  const Part& part = run_->parts[run_->part];
  run_->merged.clear();
  run_->versions.clear();
  // Each version once: from the first replica of each hash.
  std::map<NodeId, RepairFetch> fetches;
  for (const auto& [key, row] : run_->differing) {
    std::set<uint64_t> asked;
    for (const auto& [replica, hash] : row.hashes) {
      if (!asked.insert(hash).second) continue;
      RowKey& wanted = *fetches[replica].add_row();
      wanted.set_partition_key(row.partition_key);
      wanted.set_clustering_key(row.clustering_key);
      wanted.set_range_tombstones(row.range_tombstones);
    }
  }
  std::set<NodeId> to;
  for (const auto& [replica, fetch] : fetches) to.insert(replica);
  Send(Step::kFetch, to, [&](NodeId replica, Envelope& message) {
    RepairFetch& fetch = *message.mutable_repair_fetch();
    fetch = fetches[replica];
    fetch.set_request_id(run_->step_id);
    fetch.set_table(part.table);
  });
}

void RangeRepair::OnRows(const Envelope& message) {
  const RepairRows& answer = message.repair_rows();
  if (!Answers(message, Step::kFetch, answer.request_id())) return;
  const Part& part = run_->parts[run_->part];
  if (!answer.ok()) {
    return Finish(absl::StrCat("node ", message.from_node(), " could not read its rows of ", Describe(part)));
  }
  for (const PartitionData& data : answer.partition()) {
    run_->summary.set_bytes_fetched(run_->summary.bytes_fetched() + data.ByteSizeLong());
    Partition fetched = Partition::FromProto(data);
    if (!fetched.range_tombstones.empty()) {
      Partition deletions;
      deletions.range_tombstones = fetched.range_tombstones;
      TakeFetched(message.from_node(), storage_codec::RangeTombstonePrefix(part.table, data.partition_key()),
                  std::move(deletions));
    }
    for (auto& [clustering_key, row] : fetched.rows) {
      // With the replica's range tombstones: the merge drops what they
      // shadow, as each replica's hash of the row did.
      Partition version;
      version.range_tombstones = fetched.range_tombstones;
      version.rows.emplace(clustering_key, std::move(row));
      TakeFetched(message.from_node(), storage_codec::RowPrefix(part.table, data.partition_key(), clustering_key),
                  std::move(version));
    }
  }
  if (run_->waiting.empty()) PushMissing();
}

void RangeRepair::TakeFetched(NodeId replica, const std::string& key, Partition version) {
  auto differing = run_->differing.find(key);
  if (differing == run_->differing.end()) return;  // not asked
  auto hash = differing->second.hashes.find(replica);
  if (hash == differing->second.hashes.end()) return;
  run_->merged[key].Merge(version);
  run_->versions[{key, hash->second}] = std::move(version);
  run_->summary.set_rows_fetched(run_->summary.rows_fetched() + 1);
}

void RangeRepair::PushMissing() {
  const Part& part = run_->parts[run_->part];
  std::map<NodeId, std::map<std::string, Partition>> missing;  // replica -> partition key -> rows
  for (const auto& [key, row] : run_->differing) {
    // Without what a row or range tombstone shadows: no replica needs that.
    Partition& merged = run_->merged[key];
    merged.Compact();
    for (NodeId replica : part.range.replicas) {
      auto hash = row.hashes.find(replica);
      const Partition held = hash == row.hashes.end() ? Partition() : run_->versions[{key, hash->second}];
      Partition lacking = held.Missing(merged);
      // A row's range tombstones go as their own row.
      if (!row.range_tombstones) lacking.range_tombstones.clear();
      if (lacking.empty()) continue;
      const size_t rows_sent = lacking.rows.size() + (lacking.range_tombstones.empty() ? 0 : 1);
      run_->summary.set_rows_sent(run_->summary.rows_sent() + rows_sent);
      metrics_.repair_rows_sent += rows_sent;
      missing[replica][row.partition_key].Merge(lacking);
    }
  }
  if (missing.empty()) return EndRound(run_->round_end);
  CHARYBDIS_PROBE(env_.probes, "repair.rows_sent");
  std::set<NodeId> to;
  for (const auto& [replica, partitions] : missing) to.insert(replica);
  Send(Step::kPush, to, [&](NodeId replica, Envelope& message) {
    RepairPush& push = *message.mutable_repair_push();
    push.set_request_id(run_->step_id);
    for (const auto& [partition_key, rows] : missing[replica]) {
      PartitionData& mutation = *push.add_mutation();
      rows.ToProto(&mutation);
      mutation.set_table(part.table);
      mutation.set_partition_key(partition_key);
      run_->summary.set_bytes_sent(run_->summary.bytes_sent() + mutation.ByteSizeLong());
    }
  });
}

void RangeRepair::OnPushAck(const Envelope& message) {
  const RepairPushAck& ack = message.repair_push_ack();
  if (!Answers(message, Step::kPush, ack.request_id())) return;
  if (!ack.ok()) {
    return Finish(absl::StrCat("node ", message.from_node(), " could not store the rows it lacks of ",
                               Describe(run_->parts[run_->part])));
  }
  if (run_->waiting.empty()) EndRound(run_->round_end);
}

void RangeRepair::EndRound(std::optional<std::pair<std::string, std::string>> end) {
  run_->differing.clear();
  run_->merged.clear();
  run_->versions.clear();
  run_->hashes.clear();
  run_->after = std::move(end);
  if (!run_->after.has_value()) return RecordPart();
  Continue();
}

void RangeRepair::RecordPart() {
  const Part& part = run_->parts[run_->part];
  CHARYBDIS_ASSERT(run_->part_began_us > 0);
  const std::set<NodeId> replicas(part.range.replicas.begin(), part.range.replicas.end());
  Send(Step::kRecord, replicas, [&](NodeId, Envelope& message) {
    RepairRecord& record = *message.mutable_repair_record();
    record.set_request_id(run_->step_id);
    record.set_table(part.table);
    record.set_first_token(part.range.span.first);
    record.set_last_token(part.range.span.last);
    record.set_began_us(run_->part_began_us);
    record.set_topology_version(run_->version);
  });
}

void RangeRepair::OnRecordAck(const Envelope& message) {
  const RepairRecordAck& ack = message.repair_record_ack();
  if (!Answers(message, Step::kRecord, ack.request_id())) return;
  if (!ack.ok()) {
    return Finish(absl::StrCat("node ", message.from_node(), " could not record the repair of ",
                               Describe(run_->parts[run_->part])));
  }
  if (!run_->waiting.empty()) return;
  CHARYBDIS_PROBE(env_.probes, "repair.range_repaired");
  run_->summary.set_ranges(run_->summary.ranges() + 1);
  metrics_.repair_ranges_repaired++;
  run_->part++;
  run_->part_began_us = 0;
  Continue();
}

void RangeRepair::Continue() {
  // Beside clients the repair takes about a fifth of the shard's time at
  // most, a small round at a time, as ScyllaDB's repair runs in a
  // scheduling group of fewer shares.
  const bool busy = run_->round_began > 0 && ForegroundRequests(metrics_) > run_->foreground_then;
  if (!run_->small_rounds) {
    const uint32_t grown = std::min(std::max(run_->round_rows, kRoundRows) * 2, kMaxRoundRows);
    run_->round_rows = busy ? kBusyRoundRows : run_->round_agreed ? grown : kRoundRows;
  }
  Nanos pause = busy ? 4 * (env_.clock->Now() - run_->round_began) : 0;
  if (busy) {
    CHARYBDIS_PROBE(env_.probes, "repair.yielded_to_clients");
    metrics_.repair_rounds_yielded++;
  }
  // Buggify: as if a round took long; a topology change, a crash or a
  // client's write then lands in the middle of a repair.
  if (env_.buggify->Fires("repair.round_paused")) pause = std::max(pause, kBuggifyRoundPause);
  if (pause <= 0) return Next();
  env_.clock->After(pause, [this, id = run_->step_id] {
    if (run_.has_value() && run_->step_id == id) Next();
  });
}

std::string RangeRepair::Describe(const Part& part) const {
  return absl::StrCat(part.table, " in [", part.range.span.first, ", ", part.range.span.last, "]");
}

void RangeRepair::Finish(const std::string& error) {
  CHARYBDIS_ASSERT(run_.has_value());
  if (!error.empty()) CHARYBDIS_PROBE(env_.probes, "repair.shard_stopped");
  Envelope answer;
  ShardRepairDone& done = *answer.mutable_shard_repair_done();
  done.set_request_id(run_->request_id);
  done.set_ok(error.empty());
  done.set_error(error);
  *done.mutable_summary() = run_->summary;
  const Address requester = run_->requester;
  run_.reset();
  env_.network->Send(requester, std::move(answer));
}

}  // namespace charybdis::repair
