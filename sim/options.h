#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace charybdis::sim {

struct Options {
  std::vector<std::string> scenarios;  // files, after expanding directories
  bool scenarios_given = false;        // else every scenario in scenarios/
  uint64_t first_seed = 1;
  uint64_t last_seed = 1;
  bool check_determinism = false;
  std::string trace_out;
  std::string report;
  std::string history_out;
  // Check a recorded history against the scenario's history checks
  // instead of running it.
  std::string check_history;
  unsigned jobs = 1;
  // --shard=I/N: the 0-based slice index and the slice count.
  uint64_t shard_index = 0;
  uint64_t shard_count = 1;
  // --merge: report files of slices to combine instead of running.
  std::vector<std::string> merge;
  // --shrink: reduce the failing run of one scenario at one seed.
  // A latency profile (`charybdis-ctl calibrate`) replacing every
  // scenario's network and disk latencies.
  std::string profile;
  bool shrink = false;
  std::string shrink_out;  // default: next to the working directory
  uint64_t shrink_runs = 400;
  // --every_crash_point=NODE: crash that node at each of its synced writes
  // in turn (sim/crash_point_sweep.h); 0: off.
  uint32_t every_crash_point = 0;
  uint64_t crash_restart_ms = 1000;
  bool help = false;
};

extern const char kUsage[];

// Parses `./charybdis sim` flags. Errors are InvalidArgument with a message
// for the user (exit 2).
absl::StatusOr<Options> ParseOptions(const std::vector<std::string>& args);

}  // namespace charybdis::sim
