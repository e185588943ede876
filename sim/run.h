#pragma once

#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "core/env/time.h"
#include "sim/scenario_loader.h"
#include "sim/workload.h"

namespace charybdis::sim {

enum class Outcome {
  kPassed,
  kCheckFailed,  // a correctness check failed
  kLiveness,     // work unfinished at the time limit
};

struct RunResult {
  std::string scenario;
  uint64_t seed = 0;
  uint64_t trace_hash = 0;
  uint64_t events = 0;
  Nanos simulated = 0;
  std::vector<CheckResult> checks;
  nlohmann::json workloads = nlohmann::json::array();
  // The seed's world, faults applied, network and storage counts, buggify.
  nlohmann::json details = nlohmann::json::object();
  Outcome outcome = Outcome::kPassed;
  // Every fault that happened, as a scripted schedule (for --shrink).
  scenario::FaultSchedule faults_happened;
};

// Runs one scenario at one seed from start to finish. Deterministic: the
// result depends on nothing but the scenario and the seed. `trace` (may be
// null) receives one line per processed event.
// `history` (may be null) receives the client operations, one JSON object
// per line.
RunResult RunScenario(const LoadedScenario& scenario, uint64_t seed, std::FILE* trace,
                      std::ostream* history = nullptr);

// The trace of a run (one line per event), for comparing two runs.
std::string TraceOfRun(const LoadedScenario& scenario, uint64_t seed);

}  // namespace charybdis::sim
