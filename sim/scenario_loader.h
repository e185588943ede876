#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "proto/scenario.pb.h"
#include "sim/topology.h"

namespace charybdis::sim {

struct LoadedScenario {
  std::string path;
  scenario::Scenario spec;
  Topology topology;
};

// Reads and checks a scenario file. Errors are InvalidArgument (or NotFound)
// with a message "FILE:LINE:COLUMN: FIELD: what is wrong".
absl::StatusOr<LoadedScenario> LoadScenario(const std::string& path);
// The same, from text already in memory; `path` only names it in errors.
absl::StatusOr<LoadedScenario> ParseScenario(const std::string& path, const std::string& text);

// A latency profile: a scenario file holding only `network` and `storage`
// latencies (what `charybdis-ctl calibrate` writes).
absl::StatusOr<scenario::Scenario> LoadProfile(const std::string& path);
// Puts the profile's intra_dc, intra_node, read, write and sync latencies
// into `spec`; its loss, faults and everything else stay.
void ApplyProfile(const scenario::Scenario& profile, scenario::Scenario& spec);

}  // namespace charybdis::sim
