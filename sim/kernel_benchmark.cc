// `./charybdis bench`: how fast the simulator runs. Reports events processed
// per wall-clock second and simulated seconds per wall second for the smoke
// scenario, and the raw throughput of the event queue.
//
// Run from the repository root (the scenario path is relative to it), or
// pass --scenario=FILE before the Google Benchmark flags.

#include <benchmark/benchmark.h>

#include <cstring>
#include <iostream>

#include "core/random.h"
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
