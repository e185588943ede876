#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "sim/run.h"
#include "sim/scenario_loader.h"

namespace charybdis::sim {

// What the runner keeps of one run (one scenario at one seed).
struct RunRecord {
  size_t scenario = 0;  // index into the sweep's scenarios
  uint64_t seed = 0;
  int exit_code = 0;    // 0, 1 (check failed), 3 (liveness) or 4 (nondeterministic)
  std::string summary_line;
  std::string summary;  // the readable account
  std::string why;      // for failures
  nlohmann::json report;
  // {"probes": {name: hits}, "buggify": {site: fires}}, always kept: a
  // sweep adds them up.
  nlohmann::json coverage;

  nlohmann::json ToJson() const;
  static RunRecord FromJson(const nlohmann::json& json);
};

struct SweepOptions {
  bool check_determinism = false;
  bool want_report = false;
  unsigned jobs = 1;
  // Runs only seeds first + shard_index, first + shard_index + shard_count, ...
  uint64_t shard_index = 0;
  uint64_t shard_count = 1;
  std::FILE* trace = nullptr;       // jobs == 1 only
  std::ostream* history = nullptr;  // one run only
};

// A run's exit code (exit_codes.h), and the checks it failed, one line.
int ExitCodeOf(Outcome outcome);
std::string FailedChecks(const RunResult& result);

// Runs every scenario at every seed in [first, last]. With jobs > 1 the
// runs are spread over that many worker processes (each run is still
// deterministic on its own); records come back in (scenario, seed) order.
// `progress` is called after each finished run with the count so far.
std::vector<RunRecord> Sweep(const std::vector<LoadedScenario>& scenarios, uint64_t first,
                             uint64_t last, const SweepOptions& options,
                             const std::function<void(size_t done, size_t failed)>& progress);

}  // namespace charybdis::sim
