#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "node/bench/bench_load.h"
#include "node/bench/bench_systems.h"

namespace charybdis::node {

// The phases of `./charybdis bench real` (docs/benchmarks.md), each run
// against several systems in turn, measure by measure, so that a noisy
// moment of the machine falls on both rather than on one.

// How much each phase does; the defaults are the shapes.
struct PhaseSizes {
  uint32_t sequential_puts = 20000;
  uint32_t sequential_gets = 20000;
  uint32_t sequential_lwts = 5000;
  uint32_t in_flight = 64;
  uint32_t in_flight_seconds = 10;
  std::vector<uint32_t> contention_clients = {16, 8, 4};
  uint32_t contention_attempts = 312;  // per client
  uint32_t lwt_load_in_flight = 250;
  uint32_t lwt_load_seconds = 10;
  std::vector<uint32_t> lwt_load_batches = {1, 50, 1000};
  uint64_t memory_lwts = 1'000'000;  // phase m, `in_flight` at a time
  uint32_t level_requests = 5000;     // phase q: puts, then gets, per level
  // Any one sequential phase (or tenth of phase m) stops after this long,
  // whatever its count.
  uint32_t max_phase_seconds = 120;
};

// One measure of one system.
struct PhaseRun {
  std::string phase;    // a, b, c or d
  std::string measure;  // "QUORUM put", "contention 16 clients", ...
  std::string mode;     // durability and routing: group, periodic, naive; and RF
  std::string system;   // charybdis, etcd
  uint32_t rows_per_request = 1;
  LoadResult result;
};

// Error kinds that mean a system broke a promise (a read missing what was
// written, a fresh key not inserted, an increment lost), not a timeout.
// The benchmark fails when any run has one.
bool IsCheckFailure(const std::string& error_kind);

// `mode` labels the runs; `tag` keeps the keys of this call apart from
// every other call's on the same systems.
std::vector<PhaseRun> RunSequential(const std::vector<BenchSystem*>& systems, const PhaseSizes& sizes,
                                    const std::string& mode, const std::string& tag);
std::vector<PhaseRun> RunInFlight(const std::vector<BenchSystem*>& systems, const PhaseSizes& sizes,
                                  const std::string& mode, const std::string& tag);
std::vector<PhaseRun> RunContention(const std::vector<BenchSystem*>& systems, const PhaseSizes& sizes,
                                    const std::string& mode, const std::string& tag);
std::vector<PhaseRun> RunLwtLoad(const std::vector<BenchSystem*>& systems, const PhaseSizes& sizes,
                                 const std::string& mode, const std::string& tag);

// Phase q's consistency levels, in the shape of ../shared/seeds/000's
// table: sequential puts, then gets of what they wrote, through each
// system in turn, each a client at its own level (named "charybdis cql
// ONE", ...). Measures "put" and "get" of phase q.
std::vector<PhaseRun> RunLevels(const std::vector<BenchSystem*>& systems, const PhaseSizes& sizes,
                                const std::string& mode, const std::string& tag);

// Phase m: our nodes' resident memory across many LWTs on fresh keys
// (every one a partition the acceptor has not seen), `in_flight` at a
// time, in ten parts, `resident_bytes` sampled after each. One system: it
// measures our memory against itself, not against etcd.
struct MemorySample {
  uint64_t lwts = 0;  // done so far
  uint64_t resident_bytes = 0;
};
PhaseRun RunMemory(BenchSystem& system, const PhaseSizes& sizes, const std::string& mode, const std::string& tag,
                   const std::function<uint64_t()>& resident_bytes, std::vector<MemorySample>& samples);

}  // namespace charybdis::node
