#include "sim/scenario_checks.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/batchlog/batchlog.h"
#include "core/request/consistency.h"
#include "sim/linearizability.h"
#include "core/telemetry/percentile.h"

namespace charybdis::sim {

std::map<std::string, uint64_t> MetricTotals(const Cluster& cluster) {
  std::map<std::string, uint64_t> totals;
  for (NodeId id = 1; id <= cluster.size(); id++) {
    for (ShardId shard = 0; shard < cluster.topology().shards_per_node; shard++) {
      for (const auto& [name, value] : cluster.node(id).Counters(shard)) totals[name] += value;
    }
  }
  return totals;
}

CheckResult CheckLatency(const scenario::LatencyCheck& check,
                         const std::map<ConsistencyLevel, KvWorkload::Latencies>& latencies) {
  const auto faster_level = static_cast<ConsistencyLevel>(check.faster());
  const auto slower_level = static_cast<ConsistencyLevel>(check.slower());
  const char* op = check.reads() ? "read" : "write";
  CheckResult result{absl::StrCat("latency.", op, ".", ConsistencyName(faster_level), "_vs_",
                                  ConsistencyName(slower_level)),
                     false, ""};
  auto samples = [&](ConsistencyLevel level) -> std::vector<int64_t> {
    auto it = latencies.find(level);
    if (it == latencies.end()) return {};
    return check.reads() ? it->second.read_us : it->second.write_us;
  };
  const std::vector<int64_t> faster = samples(faster_level);
  const std::vector<int64_t> slower = samples(slower_level);
  if (faster.empty() || slower.empty()) {
    result.detail = "no successful operations at one of the levels";
    return result;
  }
  const auto p50_faster = static_cast<double>(Percentile(faster, 50));
  const auto p50_slower = static_cast<double>(Percentile(slower, 50));
  const double at_most = check.at_most() > 0 ? check.at_most() : 1.0;
  result.passed = p50_faster <= at_most * p50_slower && p50_faster >= check.at_least() * p50_slower;
  result.detail = absl::StrCat(op, " p50 ", ConsistencyName(faster_level), " ", p50_faster, "us vs ",
                               ConsistencyName(slower_level), " ", p50_slower, "us: ratio ",
                               p50_faster / p50_slower, " (allowed ", check.at_least(), " to ",
                               at_most, ")");
  return result;
}

CheckResult CheckWorkloadLatency(const scenario::WorkloadLatencyCheck& check,
                                 const std::vector<KvWorkload*>& workloads) {
  auto p50 = [&](const std::string& name) -> int64_t {
    for (const KvWorkload* workload : workloads) {
      if (workload->name() != name) continue;
      std::vector<int64_t> samples;
      for (const auto& [level, latencies] : workload->latencies()) {
        if (IsSerial(level)) samples.insert(samples.end(), latencies.write_us.begin(), latencies.write_us.end());
      }
      return Percentile(samples, 50);
    }
    return 0;
  };
  const int64_t measured = p50(check.workload());
  const int64_t baseline = p50(check.baseline());
  const double at_most = check.at_most() > 0 ? check.at_most() : 1.0;
  CheckResult result{absl::StrCat("latency.", check.workload(), "_vs_", check.baseline()), false, ""};
  result.passed = measured > 0 && baseline > 0 &&
                  static_cast<double>(measured) <= at_most * static_cast<double>(baseline);
  result.detail = absl::StrCat("conditional write p50 ", measured, "us vs ", baseline, "us: ratio ",
                               baseline > 0 ? static_cast<double>(measured) / static_cast<double>(baseline) : 0,
                               " (allowed up to ", at_most, ")");
  return result;
}

CheckResult CheckMetric(const scenario::MetricCheck& check, const Cluster& cluster,
                        const History& history) {
  const std::map<std::string, uint64_t> totals = MetricTotals(cluster);
  const uint64_t value = totals.count(check.metric()) ? totals.at(check.metric()) : 0;
  CheckResult result{absl::StrCat("metric.", check.metric()), false, ""};
  switch (check.relation_case()) {
    case scenario::MetricCheck::kAtLeast:
      result.passed = value >= check.at_least();
      result.detail = absl::StrCat(value, " (at least ", check.at_least(), ")");
      break;
    case scenario::MetricCheck::kAtMost:
      result.passed = value <= check.at_most();
      result.detail = absl::StrCat(value, " (at most ", check.at_most(), ")");
      break;
    case scenario::MetricCheck::kEquals: {
      const uint64_t other = totals.count(check.equals()) ? totals.at(check.equals()) : 0;
      result.passed = value == other;
      result.detail = absl::StrCat(value, " vs ", check.equals(), " ", other);
      break;
    }
    case scenario::MetricCheck::kShardSpread: {
      std::vector<uint64_t> per_shard;
      for (NodeId id = 1; id <= cluster.size(); id++) {
        for (ShardId shard = 0; shard < cluster.topology().shards_per_node; shard++) {
          const auto counters = cluster.node(id).Counters(shard);
          per_shard.push_back(counters.count(check.metric()) ? counters.at(check.metric()) : 0);
        }
      }
      const double mean = static_cast<double>(value) / static_cast<double>(per_shard.size());
      double worst = 0;
      std::string values;
      for (uint64_t v : per_shard) {
        worst = std::max(worst, mean == 0 ? 0 : std::abs(static_cast<double>(v) - mean) / mean);
        absl::StrAppend(&values, values.empty() ? "" : ",", v);
      }
      result.passed = mean > 0 && worst <= check.shard_spread();
      result.detail = absl::StrCat("per shard [", values, "], mean ", mean, ", worst deviation ",
                                   worst * 100, "% (allowed ", check.shard_spread() * 100, "%)");
      break;
    }
    case scenario::MetricCheck::kEqualsFinishedPaxosOperations: {
      uint64_t finished = 0;
      for (const CompletedOp& op : PairOperations(history)) {
        finished += IsSerial(op.invoke->consistency) && op.completion != nullptr &&
                    op.completion->type == HistoryOp::Type::kOk;
      }
      result.passed = value == finished;
      result.detail = absl::StrCat(value, " vs ", finished, " Paxos operations finished");
      break;
    }
    case scenario::MetricCheck::RELATION_NOT_SET:
      result.detail = "no relation given";
      break;
  }
  return result;
}

CheckResult CheckLinearizableHistory(const History& history) {
  std::vector<RegisterOp> operations;
  for (const CompletedOp& op : PairOperations(history)) {
    const HistoryOp& invoke = *op.invoke;
    if (!IsSerial(invoke.consistency)) continue;  // plain operations are not in the register
    RegisterOp reg;
    reg.key = invoke.Register();
    reg.process = invoke.process;
    reg.call = static_cast<uint64_t>(op.invoke - history.data());
    if (op.completion == nullptr || op.completion->type == HistoryOp::Type::kInfo) {
      reg.outcome = RegisterOp::Outcome::kInfo;
    } else if (op.completion->type == HistoryOp::Type::kFail) {
      reg.outcome = RegisterOp::Outcome::kFail;
    } else {
      reg.outcome = RegisterOp::Outcome::kOk;
      reg.ret = static_cast<uint64_t>(op.completion - history.data());
    }
    switch (invoke.function) {
      case HistoryOp::Function::kRead:
        reg.kind = RegisterOp::Kind::kRead;
        if (op.completion != nullptr && op.completion->has_value) reg.value = op.completion->value;
        break;
      case HistoryOp::Function::kWrite:
        reg.kind = RegisterOp::Kind::kWrite;
        reg.value = invoke.value;
        break;
      case HistoryOp::Function::kDelete:
        reg.kind = RegisterOp::Kind::kWrite;  // to absent
        break;
      case HistoryOp::Function::kCas:
        reg.kind = RegisterOp::Kind::kCas;
        reg.value = invoke.value;
        if (invoke.has_expected) reg.expected = invoke.expected;
        reg.applied = op.completion != nullptr && op.completion->applied;
        break;
    }
    operations.push_back(std::move(reg));
  }
  if (operations.empty()) {
    return NothingToCheck("linearizable",
                          "no Paxos operations (SERIAL or LOCAL_SERIAL reads, LWT writes, cas) in "
                          "the history");
  }
  const LinearizabilityResult checked = CheckLinearizable(operations);
  CheckResult result{"linearizable", checked.linearizable && !checked.exhausted, ""};
  result.detail = checked.detail.empty()
                      ? absl::StrCat(checked.operations, " operations on ", checked.keys,
                                     " keys linearizable")
                      : checked.detail;
  return result;
}

CheckResult CheckFinishAfterHeal(const History& history, Nanos healed, Nanos bound, Nanos end) {
  CheckResult result{"finish_after_heal", true, "", /*liveness=*/true};
  uint64_t checked = 0, late = 0;
  Nanos slowest = 0;
  for (const CompletedOp& op : PairOperations(history)) {
    if (op.invoke->time < healed) continue;
    checked++;
    const Nanos took = (op.completion != nullptr ? op.completion->time : end) - op.invoke->time;
    slowest = std::max(slowest, took);
    if (took <= bound && op.completion != nullptr) continue;
    if (++late <= 3) {
      absl::StrAppend(&result.detail, result.detail.empty() ? "" : "; ", "process ", op.invoke->process,
                      " key ", op.invoke->key, " invoked at ", op.invoke->time / kMillisecond, "ms ",
                      op.completion != nullptr ? absl::StrCat("took ", took / kMillisecond, "ms")
                                               : std::string("never finished"));
    }
  }
  if (checked == 0) {
    return NothingToCheck("finish_after_heal", absl::StrCat("no operation began after the heal at ",
                                                            healed / kMillisecond, "ms"));
  }
  result.passed = late == 0;
  result.detail = result.passed
                      ? absl::StrCat(checked, " operations after the heal at ", healed / kMillisecond,
                                     "ms, slowest ", slowest / kMillisecond, "ms (bound ",
                                     bound / kMillisecond, "ms)")
                      : absl::StrCat(late, " of ", checked, " operations after the heal at ",
                                     healed / kMillisecond, "ms missed the ", bound / kMillisecond,
                                     "ms bound: ", result.detail);
  return result;
}

CheckResult CheckHintsCoverMissedWrites(NodeId node, const Cluster& cluster, const History& history) {
  uint64_t attempted = 0;
  for (const CompletedOp& op : PairOperations(history)) {
    if (op.invoke->function == HistoryOp::Function::kRead) continue;
    if (op.completion != nullptr && op.completion->type == HistoryOp::Type::kFail) continue;
    attempted++;
  }
  uint64_t applied_directly = 0;
  for (ShardId shard = 0; shard < cluster.topology().shards_per_node; shard++) {
    const auto counters = cluster.node(node).Counters(shard);
    applied_directly += counters.at("database_total_writes");
  }
  const std::map<std::string, uint64_t> totals = MetricTotals(cluster);
  // Hint replays count as writes on the target too.
  applied_directly -= totals.at("hints_sent");
  const uint64_t missed = attempted - applied_directly;
  CheckResult result{"hints_cover_missed_writes", totals.at("hints_written") == missed, ""};
  result.detail = absl::StrCat("node ", node, " missed ", missed, " of ", attempted,
                               " writes; hints_written ", totals.at("hints_written"), ", hints_sent ",
                               totals.at("hints_sent"));
  return result;
}

CheckResult CheckBatchlogDrained(const Cluster& cluster) {
  const std::string prefix = Batchlog::EntryPrefix();
  uint64_t left = 0;
  std::string where;
  for (NodeId id = 1; id <= cluster.size(); id++) {
    const SimNode& node = cluster.node(id);
    if (!node.running()) continue;
    const SimStorage::Contents& contents = node.storage(0).contents();
    uint64_t entries = 0;
    for (auto it = contents.lower_bound(prefix); it != contents.end() && it->first.starts_with(prefix); ++it) {
      entries++;
    }
    if (entries > 0) absl::StrAppend(&where, where.empty() ? "" : ", ", "node ", id, ": ", entries);
    left += entries;
  }
  CheckResult result{"batchlog_drained", left == 0, "every running node's batch log is empty"};
  if (left > 0) result.detail = absl::StrCat(left, " batch log entries left (", where, ")");
  return result;
}

}  // namespace charybdis::sim
