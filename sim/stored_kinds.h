#pragma once

#include <string_view>

namespace charybdis::sim {

// What a stored key holds, by the subsystem that writes it: "paxos state",
// "paxos horizon and fences", "hints", "batch log", "schema log",
// "topology log", "generation", "data" (rows of tables, the system ones
// included) or "other". The crash-point sweep
// reports which of them its synced writes touched.
const char* StoredKindOf(std::string_view key);

}  // namespace charybdis::sim
