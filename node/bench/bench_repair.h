#pragma once

// Phase r of `./charybdis bench real` (docs/benchmarks.md, "Phase r"):
// repair and tombstone GC on a 3-node cluster, measured against the same
// run (issue 31's table): a repair of replicas in agreement beside a full
// scan of the same data, what a repair sends after a replica missed 1% of
// the writes beside what it missed, the disk after rows are written,
// deleted, repaired and compacted beside its peak, and the clients'
// QUORUM put p99 during a repair beside just before.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "node/bench/bench_load.h"
#include "node/bench/bench_report.h"
#include "node/bench/bench_systems.h"
#include "node/local/local_cluster.h"

namespace charybdis::node {

struct RepairSizes {
  // Written and deleted on the empty cluster first, then repaired and
  // compacted: the disk measure.
  uint64_t gc_rows = 1'000'000;
  uint32_t gc_value_bytes = 100;
  // Then loaded at RF=3: what each replica holds for the repair measures.
  uint64_t data_bytes = 256ull << 20;
  uint32_t value_bytes = 4096;
  uint32_t load_in_flight = 64;
  // Of data_bytes, written at QUORUM while node 3 is down (no hints).
  double missed_fraction = 0.01;
  // The clients' QUORUM puts before a repair and during one.
  uint32_t window_seconds = 10;
  uint32_t put_clients = 4;
  uint32_t repair_timeout_seconds = 3600;
};

struct RepairMeasures {
  uint64_t gc_peak_bytes = 0;   // the nodes' stored bytes at their largest
  uint64_t gc_after_bytes = 0;  // after repair and compaction
  uint64_t data_bytes = 0;      // loaded, per replica
  double scan_seconds = 0;      // COUNT(*) of the table at ONE
  double in_sync_seconds = 0;   // every node repairing its primary ranges
  uint64_t in_sync_bytes_sent = 0;  // fetched and sent by that repair
  uint64_t missed_bytes = 0;        // what node 3 missed, keys and values
  uint64_t missed_bytes_sent = 0;   // fetched and sent by the repair after
  double missed_seconds = 0;
  LoadResult puts_before, puts_during;
};

// The phase on `cluster` (three nodes, table kv in tombstone_gc repair
// mode with no propagation delay, hints off), through `client`.
absl::StatusOr<RepairMeasures> RunRepair(LocalCluster& cluster, BenchSystem& client, const RepairSizes& sizes);

// The phase's lines with issue 31's goals: in-sync repair sends < 0.1% of
// the data and takes <= 2x a full scan; after 1% missed it sends <= 3x the
// missed bytes; the disk ends <= 5% of its peak; QUORUM put p99 during a
// repair <= 2x before.
std::vector<Comparison> RepairComparisons(const RepairMeasures& measures);

}  // namespace charybdis::node
