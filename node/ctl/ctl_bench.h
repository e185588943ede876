#pragma once

#include <cstdint>
#include <string>

#include "proto/client.pb.h"

namespace charybdis::node {

// `ctl bench`: clients, each with one request at a time, against one node,
// through the real-node benchmark's client (node/bench/bench_systems.h).
struct BenchOptions {
  // put, get, cas (IF NOT EXISTS on fresh keys) or contend (lock-step
  // contention on one key: SERIAL read, then IF v = read SET v+1).
  std::string operation;
  // Requests; contend: attempts per client.
  uint32_t count = 20000;
  // Clients (threads on one channel), so this many requests in flight.
  uint32_t in_flight = 1;
  ConsistencyLevel level = CL_QUORUM;
  std::string table = "kv";
  uint32_t shards = 1;  // of the target node, for shard-aware requests
  // Keys are PREFIX0..PREFIX{count-1}: a get run reads what a put run with
  // the same prefix wrote. contend: the key is PREFIX/c/counter-CLIENTS.
  std::string key_prefix = "bench-";
};

// Runs the benchmark against the node at `address` and prints one line of
// results (count, errors, p50/p90/p99/max in microseconds, operations per
// second; contend: applied/s and the failed fraction too). Returns the
// number of failed requests.
uint64_t RunBench(const std::string& address, const BenchOptions& options);

}  // namespace charybdis::node
