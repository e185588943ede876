#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "node/bench/bench_systems.h"

namespace charybdis::node {

// Closed-loop load: `clients` threads, each issuing one request at a time
// until `max_requests` are taken or `max_duration` has passed, whichever
// comes first (every loop of the benchmark is bounded in both).
struct LoadOptions {
  uint32_t clients = 1;
  uint64_t max_requests = 1000;
  std::chrono::milliseconds max_duration{60000};
  // Progress on stderr every this many requests (0: none).
  uint64_t progress_every = 0;
  std::string label;  // for the progress lines
};

// Issues request `i` (each i once, across clients) on behalf of `client`.
// It may make several calls (a read, then a conditional write): its
// latency is the whole.
using RequestFunction = std::function<Outcome(uint32_t client, uint64_t i)>;

struct LoadResult {
  uint64_t requests = 0;
  uint64_t ok = 0;
  uint64_t applied = 0;
  std::map<std::string, uint64_t> errors;  // by kind
  std::vector<int64_t> latencies_us;       // of ok requests
  double seconds = 0;

  uint64_t failed() const { return requests - ok; }
  double ok_per_second() const { return seconds > 0 ? static_cast<double>(ok) / seconds : 0; }
  double applied_per_second() const { return seconds > 0 ? static_cast<double>(applied) / seconds : 0; }
  int64_t p50_us() const;
  int64_t p99_us() const;
  // "N ok, N failed (KIND=N ...), p50 N us, p99 N us, N ops/s".
  std::string Summary() const;
};

LoadResult RunLoad(const LoadOptions& options, const RequestFunction& request);

// `bytes` printable bytes that compression cannot shrink much (xorshift
// from `seed`), so that what a load writes is what the disk takes.
std::string IncompressibleValue(uint32_t bytes, uint64_t seed = 0);

// Starts request `i` and calls `done` with its outcome when it is over,
// from any thread or inside the call.
using AsyncRequestFunction = std::function<void(uint64_t i, OutcomeDone done)>;
// The same closed loop from one thread, with `clients` requests in flight:
// each answer starts the next request. Returns once every request started
// is over (each is bounded by its own deadline).
LoadResult RunAsyncLoad(const LoadOptions& options, const AsyncRequestFunction& request);

// Adds `from`'s requests, outcomes and latencies to `into` (not its
// seconds: runs side by side share their time, runs one after another
// add it up).
void Merge(const LoadResult& from, LoadResult& into);

// Lock-step rounds, as in the contention loop of ../shared/seeds/000:
// every client does `first`, all wait for each other, every client does
// `second`, all wait, and so on for `rounds` rounds (or until
// `max_duration`, checked between rounds so that all stop together). A
// request is the pair: `second(client, what first returned)` is skipped
// when `first` fails. Latency excludes the waits.
using SecondStep = std::function<Outcome(uint32_t client, const Outcome& first)>;
LoadResult RunLockStep(uint32_t clients, uint64_t rounds, std::chrono::milliseconds max_duration,
                       const RequestFunction& first, const SecondStep& second);

}  // namespace charybdis::node
