#pragma once

#include <string>

#include "google/protobuf/text_format.h"
#include "proto/scenario.pb.h"

namespace charybdis::sim {

// Checks that a parsed scenario makes sense as a whole (a replication
// factor no larger than its datacenter, faults on nodes that exist...).
// Returns one line per problem, "FILE:LINE:COLUMN: FIELD: problem", or "".
std::string ValidateScenario(const std::string& path, const scenario::Scenario& spec,
                             const google::protobuf::TextFormat::ParseInfoTree& locations);

// Defaults that apply where a scenario leaves a field at zero.
constexpr uint64_t kDefaultHeartbeatIntervalMs = 200;
constexpr uint64_t kDefaultConvictAfterMs = 1000;

}  // namespace charybdis::sim
