#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace charybdis {

// A log-linear histogram of non-negative integers (latencies in
// microseconds): 16 buckets per power of two, so a percentile is within
// about 6% of the true value. Fixed size, no allocation per sample.
class Histogram {
 public:
  void Record(int64_t value);
  uint64_t count() const { return count_; }
  int64_t sum() const { return sum_; }
  // The upper bound of the bucket holding the p-th percentile (0 < p <= 100);
  // 0 when empty.
  int64_t Percentile(double p) const;
  void Merge(const Histogram& other);

 private:
  static constexpr int kSubBuckets = 16;
  static size_t BucketOf(uint64_t value);
  static int64_t UpperBoundOf(size_t bucket);

  std::array<uint64_t, 64 * kSubBuckets> buckets_{};
  uint64_t count_ = 0;
  int64_t sum_ = 0;
};

// One shard's metrics, named after ScyllaDB's where one exists.
struct ShardMetrics {
  // Replica side.
  uint64_t database_total_reads = 0;
  uint64_t database_total_writes = 0;
  uint64_t database_failed_writes = 0;
  uint64_t database_failed_reads = 0;
  // Stored versions that failed their checksum and were dropped.
  uint64_t database_corrupt_entries = 0;
  // The read cache (core/read_cache/read_cache.h): scans served from memory, scans
  // of a cacheable range that went to storage, ranges it filled, fills it
  // did not keep (a write was in flight, or the range was too large), and
  // ranges that left it.
  uint64_t read_cache_hits = 0;
  uint64_t read_cache_misses = 0;
  uint64_t read_cache_fills = 0;
  uint64_t read_cache_fills_skipped = 0;
  uint64_t read_cache_evictions = 0;
  // Coordinator side.
  uint64_t coordinator_writes = 0;
  uint64_t coordinator_reads = 0;
  uint64_t write_timeouts = 0;
  uint64_t write_unavailable = 0;
  uint64_t read_timeouts = 0;
  uint64_t read_unavailable = 0;
  uint64_t read_failures = 0;  // too many replicas refused
  uint64_t invalid_requests = 0;
  uint64_t foreground_read_repairs = 0;
  uint64_t background_read_repairs = 0;
  uint64_t speculative_retries = 0;
  uint64_t replica_writes_sent = 0;
  uint64_t replica_reads_sent = 0;
  uint64_t cross_shard_ops = 0;
  // Hinted handoff.
  uint64_t hints_written = 0;
  uint64_t hints_sent = 0;
  uint64_t hints_dropped = 0;  // not stored (the target was down too long), or the target left
  // Logged batches: stored in batch logs by this coordinator, and replayed
  // from this node's batch log (their coordinator did not finish them).
  uint64_t batches_logged = 0;
  uint64_t batchlog_replays = 0;
  // Streaming, receiver side: the pairs and bytes streams stored here,
  // counted as each stream ends.
  uint64_t stream_pairs_received = 0;
  uint64_t stream_bytes_received = 0;
  // ctl cleanup: stored pairs of ranges the node no longer replicates,
  // removed, and their bytes.
  uint64_t cleanup_pairs_removed = 0;
  uint64_t cleanup_bytes_removed = 0;
  // ctl repair, on the repairing shard: token ranges of a table found or
  // made in agreement on every replica, rows compared, rows found to
  // differ, and row versions sent to replicas lacking them.
  uint64_t repair_ranges_repaired = 0;
  uint64_t repair_rows_compared = 0;
  uint64_t repair_rows_differing = 0;
  uint64_t repair_rows_sent = 0;
  // Unfinished Paxos rounds a repair found under its fence and finished.
  uint64_t repair_paxos_rounds_finished = 0;
  // ctl compact: stored pairs deleted (purged deletions with what they
  // shadowed, and obsolete versions), and their bytes.
  uint64_t gc_pairs_purged = 0;
  uint64_t gc_bytes_purged = 0;
  uint64_t gc_deletions_purged = 0;  // row and cell tombstones, expired cells
  // ctl compact: partitions' Paxos states wholly below their purge floor,
  // deleted (docs/repair.md, "Paxos state").
  uint64_t paxos_states_purged = 0;
  // Replays (hints', batch logs') whose versions from before the
  // replica's purge horizon were dropped (replicas that received them
  // count).
  uint64_t replays_dropped_past_horizon = 0;
  // Keys of dropped tables deleted (docs/repair.md, "Dropped tables").
  uint64_t dropped_table_pairs_deleted = 0;
  // Repair rounds after which the shard paused for clients (docs/repair.md,
  // "Beside clients").
  uint64_t repair_rounds_yielded = 0;
  // Lightweight transactions (coordinator side).
  uint64_t cas_total_operations = 0;
  uint64_t cas_write_contention = 0;  // lost rounds, summed over operations
  uint64_t cas_write_condition_not_met = 0;
  uint64_t cas_write_unfinished_commit = 0;
  uint64_t cas_write_timeout_due_to_uncertainty = 0;
  // Conditional writes that joined a round after its prepare went out.
  uint64_t cas_write_joined_late = 0;
  // Rounds that ended by letting replicas drop commits durable on a quorum.
  uint64_t cas_prune = 0;
  // Idle Paxos states the acceptor dropped from its bounded cache.
  uint64_t paxos_cache_evictions = 0;

  Histogram write_latency_us;
  Histogram read_latency_us;
  Histogram cas_write_latency;  // microseconds
  Histogram cas_read_latency;

  // Counters by name, in a fixed order (for reports and /metrics).
  std::vector<std::pair<std::string, uint64_t>> Counters() const;
  // Latency histograms by name, in a fixed order.
  std::vector<std::pair<std::string, const Histogram*>> Histograms() const;
};

}  // namespace charybdis
