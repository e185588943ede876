#pragma once

// Phase l of `./charybdis bench real` (docs/benchmarks.md, "Phase l"):
// paging through one big partition through CQL (issue 34's "big
// partitions"), measured against the same run. A page must cost what it
// returns: the first pages of a partition of a million rows beside a
// whole partition of one page, and the last pages beside the first.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "node/bench/bench_report.h"

namespace charybdis::node {

struct BigPartitionSizes {
  uint64_t rows = 1'000'000;
  uint32_t value_bytes = 16;
  uint32_t rows_per_batch = 1000;  // loaded by unlogged batches of one partition
  uint32_t loaders = 4;            // batches at once, a connection each
  int32_t page_size = 5000;        // the Python driver's default fetch size
  uint32_t edge_pages = 10;        // pages averaged at each end
};

struct BigPartitionMeasures {
  uint64_t rows = 0;                 // in the big partition, every one read back in order
  double load_seconds = 0;
  std::vector<double> page_ms;       // each page of the big partition, in order
  double small_partition_ms = 0;     // a partition of one page, read whole before each first page (their mean)

  double first_pages_ms(uint32_t edge_pages) const;
  double last_pages_ms(uint32_t edge_pages) const;
};

// Loads bench.rows (BenchCqlSchema) on the cluster whose node serves CQL
// at `cql_address`, with a partition of page_size rows and one of `rows`
// rows, then pages through the second at QUORUM, reading the first whole
// right before each of its first edge_pages pages. An error when the pages do not give back every row, in order.
absl::StatusOr<BigPartitionMeasures> RunBigPartition(const std::string& cql_address, const BigPartitionSizes& sizes);

// The phase's lines, each goal 1.5: the first pages beside a partition of
// one page, the last pages beside the first.
std::vector<Comparison> BigPartitionComparisons(const BigPartitionMeasures& measures, const BigPartitionSizes& sizes);

}  // namespace charybdis::node
