#pragma once

#include <cstdint>
#include <string>

#include "proto/client.pb.h"
#include "proto/node.grpc.pb.h"

namespace charybdis::node {

// `ctl bench`: clients, each with one request at a time, against one node.
struct BenchOptions {
  std::string operation;  // put, get or cas (IF NOT EXISTS on fresh keys)
  uint32_t count = 20000;
  // Clients (threads on one channel), so this many requests in flight.
  uint32_t in_flight = 1;
  ConsistencyLevel level = CL_QUORUM;
  std::string table = "kv";
  // Name the shard owning each key (else the node picks one).
  bool shard_aware = true;
  uint32_t shards = 1;  // of the target node, for shard-aware requests
  // Keys are PREFIX0..PREFIX{count-1}: a get run reads what a put run with
  // the same prefix wrote.
  std::string key_prefix = "bench-";
};

// Runs the benchmark and prints one line of results (count, errors,
// p50/p90/p99/max in microseconds, operations per second). Returns the
// number of failed requests.
uint64_t RunBench(Client::Stub& stub, const BenchOptions& options);

}  // namespace charybdis::node
