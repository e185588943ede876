#pragma once

#include <map>
#include <string>

#include "proto/scenario.pb.h"
#include "sim/cluster.h"
#include "core/workload/history.h"
#include "sim/kv_workload.h"
#include "sim/workload.h"

namespace charybdis::sim {

// Metric totals over every shard and life of every node.
std::map<std::string, uint64_t> MetricTotals(const Cluster& cluster);

CheckResult CheckLatency(const scenario::LatencyCheck& check,
                         const std::map<ConsistencyLevel, KvWorkload::Latencies>& latencies);

// p50 of one workload's conditional writes against another's.
CheckResult CheckWorkloadLatency(const scenario::WorkloadLatencyCheck& check,
                                 const std::vector<KvWorkload*>& workloads);

CheckResult CheckMetric(const scenario::MetricCheck& check, const Cluster& cluster,
                        const History& history);

// The Paxos operations of the history (serial reads, LWT writes, cas) are
// a linearizable register per key.
CheckResult CheckLinearizableHistory(const History& history);

// Liveness mode: every operation invoked at or after `healed` finished
// within `bound` (those still open at `end` count as unfinished).
CheckResult CheckFinishAfterHeal(const History& history, Nanos healed, Nanos bound, Nanos end);

// hints_written equals the writes `node` missed (see proto/scenario.proto).
CheckResult CheckHintsCoverMissedWrites(NodeId node, const Cluster& cluster, const History& history);

// No running node's batch log (shard 0's storage) holds an entry.
CheckResult CheckBatchlogDrained(const Cluster& cluster);

}  // namespace charybdis::sim
