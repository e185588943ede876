#pragma once

#include <cstdint>
#include <ostream>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "proto/scenario.pb.h"
#include "sim/scenario_loader.h"

namespace charybdis::sim {

struct ShrinkResult {
  scenario::Scenario spec;           // the small scenario, failing at the same seed
  std::set<std::string> failing;     // the original's failed checks it still fails
  uint64_t events_before = 0;
  uint64_t events_after = 0;
  int faults_before = 0;             // faults that happened in the original run
  int faults_after = 0;              // scripted faults left
  // Whether the faults that happened, replayed as a script, failed the
  // same way (else random_faults stay, cut kind by kind).
  bool faults_scripted = false;
  size_t runs = 0;
};

// Reduces a failing run of `scenario` at `seed` to a small scenario that
// fails one of the same checks at that seed (delta debugging). It replays
// the faults that actually happened as a scripted schedule, removes and
// shortens them, then cuts workloads, clients, operations, keys and nodes.
// Each candidate is one run; at most `max_runs` of them. Progress goes to
// `log`. FailedPrecondition when the seed passes.
absl::StatusOr<ShrinkResult> Shrink(const LoadedScenario& scenario, uint64_t seed, size_t max_runs,
                                    std::ostream& log);

// The shrunk scenario as text, with a header saying where it came from and
// how to replay it.
std::string ShrunkScenarioText(const ShrinkResult& result, const std::string& original_path,
                               const std::string& shrunk_path, uint64_t seed);

}  // namespace charybdis::sim
