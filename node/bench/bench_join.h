#pragma once

// Phase j of `./charybdis bench real` (docs/benchmarks.md, "Phase j"): a
// fourth node joins a loaded 3-node cluster while clients keep writing,
// and the join is measured against the same run: its streaming beside
// this machine's sequential write floor for the same bytes, and the
// clients' QUORUM put p99 and LWT p50 during the join beside just before.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "node/bench/bench_load.h"
#include "node/bench/bench_report.h"
#include "node/bench/bench_systems.h"
#include "node/local/local_cluster.h"

namespace charybdis::node {

struct JoinSizes {
  uint64_t data_bytes = 1ull << 30;  // loaded before the join, at RF=3
  uint32_t value_bytes = 4096;
  uint32_t load_in_flight = 64;
  // The clients' load before the join, and from the add on: QUORUM puts
  // from `put_clients`, IF NOT EXISTS from `lwt_clients`, one request at
  // a time each.
  uint32_t window_seconds = 10;
  uint32_t put_clients = 4;
  uint32_t lwt_clients = 2;
  uint32_t join_timeout_seconds = 1800;
};

struct JoinMeasures {
  uint64_t data_bytes = 0;       // loaded
  uint64_t bytes_streamed = 0;   // stored by the new node's streams
  double streaming_seconds = 0;  // from its first stream asked to its last done
  double join_seconds = 0;       // from the add to normal
  double write_floor_bytes_per_second = 0;  // the same bytes, sequential, one fdatasync
  LoadResult puts_before, puts_during, lwts_before, lwts_during;
};

// Loads `client`'s cluster (three nodes, `cluster`), measures the window
// before, adds and starts node 4, measures the window from the add on
// while node 4 joins, then the write floor in `floor_directory`.
absl::StatusOr<JoinMeasures> RunJoin(LocalCluster& cluster, BenchSystem& client, const JoinSizes& sizes,
                                     const std::string& floor_directory);

// The phase's lines, with the goals: streaming >= 50% of the write
// floor, QUORUM p99 during <= 2x before, LWT p50 during <= 1.5x before;
// and the join's time from add to normal.
std::vector<Comparison> JoinComparisons(const JoinMeasures& measures);

}  // namespace charybdis::node
