#pragma once

// Phase t of `./charybdis bench real` (docs/benchmarks.md, "Phase t"):
// what TLS costs. Two 3-node clusters, one with TLS on the CQL port and
// between nodes and one without, take sequential QUORUM puts through CQL
// in alternating rounds, so that both see the same machine; issue 33's
// goal: the TLS cluster's p50 <= 1.15x the other's.

#include <cstdint>

#include "node/bench/bench_report.h"
#include "node/bench/bench_systems.h"

namespace charybdis::node {

struct TlsSizes {
  uint32_t rounds = 10;
  uint32_t puts_per_round = 2000;
  uint32_t value_bytes = 100;
};

// The comparison line, after every round ran on both.
Comparison RunTlsComparison(BenchSystem& with_tls, BenchSystem& without_tls, const TlsSizes& sizes);

}  // namespace charybdis::node
