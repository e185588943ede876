#include "core/telemetry/metrics.h"

#include <bit>

#include "core/env/assert.h"

namespace charybdis {

size_t Histogram::BucketOf(uint64_t value) {
  if (value < kSubBuckets) return static_cast<size_t>(value);
  const int exponent = 63 - std::countl_zero(value);  // >= 4
  const uint64_t sub = (value >> (exponent - 4)) & (kSubBuckets - 1);
  return static_cast<size_t>((exponent - 3) * kSubBuckets + sub);
}

int64_t Histogram::UpperBoundOf(size_t bucket) {
  if (bucket < kSubBuckets) return static_cast<int64_t>(bucket);
  const int exponent = static_cast<int>(bucket / kSubBuckets) + 3;
  const uint64_t sub = bucket % kSubBuckets;
  const uint64_t low = (uint64_t{kSubBuckets} + sub) << (exponent - 4);
  return static_cast<int64_t>(low + (uint64_t{1} << (exponent - 4)) - 1);
}

void Histogram::Record(int64_t value) {
  CHARYBDIS_ASSERT(value >= 0);
  buckets_[BucketOf(static_cast<uint64_t>(value))]++;
  count_++;
  sum_ += value;
}

int64_t Histogram::Percentile(double p) const {
  CHARYBDIS_ASSERT(p > 0);
  CHARYBDIS_ASSERT(p <= 100);
  if (count_ == 0) return 0;
  const auto rank = static_cast<uint64_t>(p / 100.0 * static_cast<double>(count_) + 0.999999);
  uint64_t seen = 0;
  for (size_t bucket = 0; bucket < buckets_.size(); bucket++) {
    seen += buckets_[bucket];
    if (seen >= rank) return UpperBoundOf(bucket);
  }
  return UpperBoundOf(buckets_.size() - 1);
}

void Histogram::Merge(const Histogram& other) {
  for (size_t bucket = 0; bucket < buckets_.size(); bucket++) buckets_[bucket] += other.buckets_[bucket];
  count_ += other.count_;
  sum_ += other.sum_;
}

std::vector<std::pair<std::string, const Histogram*>> ShardMetrics::Histograms() const {
  return {{"write_latency_us", &write_latency_us},
          {"read_latency_us", &read_latency_us},
          {"cas_write_latency", &cas_write_latency},
          {"cas_read_latency", &cas_read_latency}};
}

std::vector<std::pair<std::string, uint64_t>> ShardMetrics::Counters() const {
  return {
      {"database_total_reads", database_total_reads},
      {"database_total_writes", database_total_writes},
      {"database_failed_reads", database_failed_reads},
      {"database_failed_writes", database_failed_writes},
      {"database_corrupt_entries", database_corrupt_entries},
      {"read_cache_hits", read_cache_hits},
      {"read_cache_misses", read_cache_misses},
      {"read_cache_fills", read_cache_fills},
      {"read_cache_fills_skipped", read_cache_fills_skipped},
      {"read_cache_evictions", read_cache_evictions},
      {"coordinator_reads", coordinator_reads},
      {"coordinator_writes", coordinator_writes},
      {"read_timeouts", read_timeouts},
      {"read_unavailable", read_unavailable},
      {"read_failures", read_failures},
      {"write_timeouts", write_timeouts},
      {"write_unavailable", write_unavailable},
      {"invalid_requests", invalid_requests},
      {"foreground_read_repairs", foreground_read_repairs},
      {"background_read_repairs", background_read_repairs},
      {"speculative_retries", speculative_retries},
      {"replica_reads_sent", replica_reads_sent},
      {"replica_writes_sent", replica_writes_sent},
      {"cross_shard_ops", cross_shard_ops},
      {"hints_written", hints_written},
      {"hints_sent", hints_sent},
      {"hints_dropped", hints_dropped},
      {"batches_logged", batches_logged},
      {"batchlog_replays", batchlog_replays},
      {"stream_pairs_received", stream_pairs_received},
      {"stream_bytes_received", stream_bytes_received},
      {"cleanup_pairs_removed", cleanup_pairs_removed},
      {"cleanup_bytes_removed", cleanup_bytes_removed},
      {"repair_ranges_repaired", repair_ranges_repaired},
      {"repair_rows_compared", repair_rows_compared},
      {"repair_rows_differing", repair_rows_differing},
      {"repair_rows_sent", repair_rows_sent},
      {"repair_paxos_rounds_finished", repair_paxos_rounds_finished},
      {"gc_pairs_purged", gc_pairs_purged},
      {"gc_bytes_purged", gc_bytes_purged},
      {"gc_deletions_purged", gc_deletions_purged},
      {"dropped_table_pairs_deleted", dropped_table_pairs_deleted},
      {"repair_rounds_yielded", repair_rounds_yielded},
      {"paxos_states_purged", paxos_states_purged},
      {"replays_dropped_past_horizon", replays_dropped_past_horizon},
      {"cas_total_operations", cas_total_operations},
      {"cas_write_contention", cas_write_contention},
      {"cas_write_condition_not_met", cas_write_condition_not_met},
      {"cas_write_unfinished_commit", cas_write_unfinished_commit},
      {"cas_write_timeout_due_to_uncertainty", cas_write_timeout_due_to_uncertainty},
      {"cas_write_joined_late", cas_write_joined_late},
      {"cas_prune", cas_prune},
      {"paxos_cache_evictions", paxos_cache_evictions},
  };
}

}  // namespace charybdis
