// `./charybdis bench`: how fast the simulator runs. Reports events processed
// per wall-clock second and simulated seconds per wall second for the smoke
// scenario, and the raw throughput of the event queue.
//
// Run from the repository root (the scenario path is relative to it), or
// pass --scenario=FILE before the Google Benchmark flags.

#include <benchmark/benchmark.h>

#include <cstring>
#include <optional>
#include <iostream>

#include "core/env/random.h"
#include "sim/linearizability.h"
#include "sim/run.h"
#include "sim/simulator.h"

namespace charybdis::sim {
namespace {

std::string scenario_path = "scenarios/smoke.textproto";

void BM_Scenario(benchmark::State& state) {
  absl::StatusOr<LoadedScenario> scenario = LoadScenario(scenario_path);
  if (!scenario.ok()) {
    state.SkipWithError(std::string(scenario.status().message()).c_str());
    return;
  }
  uint64_t seed = 1;
  uint64_t events = 0;
  Nanos simulated = 0;
  for (auto _ : state) {
    const RunResult result = RunScenario(*scenario, seed++, nullptr);
    events += result.events;
    simulated += result.simulated;
  }
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events),
                                                      benchmark::Counter::kIsRate);
  // Simulated seconds per wall-clock second: the simulated:wall ratio.
  state.counters["sim_to_wall"] = benchmark::Counter(
      static_cast<double>(simulated) / kSecond, benchmark::Counter::kIsRate);
  state.counters["events_per_run"] = benchmark::Counter(
      static_cast<double>(events), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_Scenario)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// Client operations per wall-clock second: QUORUM reads and writes (half
// each) from 16 shard-aware clients against 3 nodes, RF=3, 2 shards each.
constexpr char kQuorumScenario[] = R"(
name: "quorum_throughput"
time_limit_ms: 600000
topology {
  shards_per_node: 2
  datacenter { name: "dc1" rack { name: "r1" nodes: 1 } rack { name: "r2" nodes: 1 } rack { name: "r3" nodes: 1 } }
  replication { datacenter { name: "dc1" replication_factor: 3 } }
}
network { intra_dc { min_us: 150 jitter_mean_us: 100 } intra_node { min_us: 5 jitter_mean_us: 2 } }
storage { read { min_us: 40 jitter_mean_us: 30 } write { min_us: 10 jitter_mean_us: 10 } sync { min_us: 100 jitter_mean_us: 50 } }
schema { table { name: "kv" column: "v" } }
workload {
  name: "quorum"
  kv {
    clients: 16 operations_per_client: 2500 table: "kv" key_count: 10000 read_fraction: 0.5
    write_consistency: CL_QUORUM read_consistency: CL_QUORUM shard_aware: true start_ms: 500
  }
}
)";

void BM_QuorumOperations(benchmark::State& state) {
  absl::StatusOr<LoadedScenario> scenario = ParseScenario("quorum_throughput", kQuorumScenario);
  if (!scenario.ok()) {
    state.SkipWithError(std::string(scenario.status().message()).c_str());
    return;
  }
  uint64_t seed = 1;
  uint64_t operations = 0;
  for (auto _ : state) {
    const RunResult result = RunScenario(*scenario, seed++, nullptr);
    operations += result.workloads[0]["ok"].get<uint64_t>();
  }
  state.counters["quorum_ops_per_s"] =
      benchmark::Counter(static_cast<double>(operations), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_QuorumOperations)->Unit(benchmark::kMillisecond)->MinTime(3.0);

// The linearizability checker on the contention scenario's shape: 16
// clients in lock-step, 312 rounds of (everyone reads, everyone
// compare-and-sets, one wins) on one key: 9,984 operations.
void BM_LinearizabilityLockStep16(benchmark::State& state) {
  std::vector<RegisterOp> history;
  std::optional<std::string> current;
  uint64_t time = 1;
  uint64_t process = 0;
  for (int round = 0; round < 312; round++) {
    for (int p = 0; p < 16; p++) {
      RegisterOp read{RegisterOp::Kind::kRead, RegisterOp::Outcome::kOk, "k0", process++, time, time + 2, current,
                      std::nullopt, false};
      history.push_back(read);
    }
    time += 3;
    const std::string next = "v" + std::to_string(round);
    for (int p = 0; p < 16; p++) {
      RegisterOp cas{RegisterOp::Kind::kCas, RegisterOp::Outcome::kOk, "k0", process++, time, time + 2,
                     next + "-" + std::to_string(p), std::nullopt, false};
      cas.expected = current;
      cas.applied = p == 0;
      history.push_back(cas);
    }
    current = next + "-0";
    time += 3;
  }
  uint64_t checked = 0;
  for (auto _ : state) {
    const LinearizabilityResult result = CheckLinearizable(history);
    if (!result.linearizable) state.SkipWithError("the history should be linearizable");
    checked += result.operations;
  }
  state.counters["operations_per_s"] =
      benchmark::Counter(static_cast<double>(checked), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_LinearizabilityLockStep16)->Unit(benchmark::kMillisecond);

// Schedule-and-step with a standing queue of `range(0)` pending events: the
// kernel's cost per event without any node logic.
void BM_EventQueue(benchmark::State& state) {
  Simulator simulator;
  simulator.AddHost();
  Random draws(1);
  uint64_t counter = 0;
  for (int64_t i = 0; i < state.range(0); i++) {
    simulator.Schedule(static_cast<Nanos>(draws.Below(1'000'000)),
                       EventTag{EventKind::kTimer, 0, 0, 0}, true, [&counter] { counter++; });
  }
  for (auto _ : state) {
    simulator.Schedule(simulator.now() + static_cast<Nanos>(draws.Below(1'000'000)),
                       EventTag{EventKind::kTimer, 0, 0, 0}, true, [&counter] { counter++; });
    simulator.Step();
  }
  benchmark::DoNotOptimize(counter);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EventQueue)->Arg(100)->Arg(10'000)->Arg(1'000'000);

}  // namespace
}  // namespace charybdis::sim

int main(int argc, char** argv) {
  for (int i = 1; i < argc; i++) {
    if (std::strncmp(argv[i], "--scenario=", 11) == 0) {
      charybdis::sim::scenario_path = argv[i] + 11;
      std::memmove(argv + i, argv + i + 1, sizeof(char*) * (argc - i));
      argc--;
      i--;
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
