#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "proto/scenario.pb.h"

namespace charybdis::node {

// `ctl calibrate`: this machine's latencies as a simulation profile
// (node/ctl/calibrate.h), from `count` traced QUORUM puts and gets, one at a
// time, against the node at `address`, then bursts of requests released
// together, for the spacing at which the client machine sends them. An
// error when the traces held no hops between nodes or no syncs.
struct MeasuredProfile {
  scenario::Scenario profile;
  std::string summary;  // what it was measured from, one line
};
absl::StatusOr<MeasuredProfile> MeasureProfile(const std::string& address, uint32_t count);

}  // namespace charybdis::node
