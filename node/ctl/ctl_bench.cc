#include "node/ctl/ctl_bench.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/telemetry/percentile.h"
#include "node/bench/bench_load.h"
#include "node/bench/bench_phases.h"
#include "node/bench/bench_systems.h"

namespace charybdis::node {

namespace {

LoadResult RunOperation(BenchSystem& system, const BenchOptions& options) {
  LoadOptions load;
  load.clients = options.in_flight;
  load.max_requests = options.count;
  load.max_duration = std::chrono::minutes(30);
  load.progress_every = 5000;
  load.label = options.operation;
  return RunLoad(load, [&](uint32_t, uint64_t i) {
    const std::string key = absl::StrCat(options.key_prefix, i);
    if (options.operation == "put") return system.Put(key, key);
    if (options.operation == "get") return system.Get(key);
    return system.CompareAndSet(key, std::nullopt, key);
  });
}

}  // namespace

uint64_t RunBench(const std::string& address, const BenchOptions& options) {
  CharybdisClientOptions client;
  client.address = address;
  client.shards = options.shards;
  client.level = options.level;
  client.table = options.table;
  std::unique_ptr<BenchSystem> system = ConnectCharybdis(client);
  LoadResult result;
  if (options.operation == "contend") {
    PhaseSizes sizes;
    sizes.contention_clients = {options.in_flight};
    sizes.contention_attempts = options.count;
    sizes.max_phase_seconds = 1800;
    result = RunContention({system.get()}, sizes, "ctl", options.key_prefix).front().result;
  } else {
    result = RunOperation(*system, options);
  }
  std::string errors;
  for (const auto& [kind, count] : result.errors) absl::StrAppend(&errors, " ", kind, "=", count);
  const std::vector<int64_t>& latencies_us = result.latencies_us;
  std::cout << options.operation << " " << ConsistencyLevel_Name(options.level) << ": " << result.requests
            << " requests (" << options.in_flight << " in flight), " << result.ok << " ok, " << result.failed()
            << " failed" << errors;
  if (options.operation == "cas") std::cout << ", " << result.ok - result.applied << " not applied";
  if (options.operation == "contend") {
    std::cout << absl::StrFormat(", %d applied (%.0f/s, failed fraction %.2f)", result.applied,
                                 result.applied_per_second(),
                                 1.0 - static_cast<double>(result.applied) / static_cast<double>(result.requests));
  }
  std::cout << "; p50 " << Percentile(latencies_us, 50) << " us, p90 " << Percentile(latencies_us, 90)
            << " us, p99 " << Percentile(latencies_us, 99) << " us, max " << Percentile(latencies_us, 100)
            << " us; " << static_cast<int64_t>(result.ok_per_second()) << " ops/s\n";
  uint64_t failures = result.failed();
  for (const auto& [kind, count] : result.errors) failures += IsCheckFailure(kind) ? count : 0;
  return failures;
}

}  // namespace charybdis::node
