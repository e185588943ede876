#pragma once

#include <string>

#include "nlohmann/json.hpp"
#include "sim/run.h"

namespace charybdis::sim {

std::string HexHash(uint64_t hash);

// The JSON report of one run (docs/scenarios.md lists its fields).
nlohmann::json ReportJson(const RunResult& result, int64_t wall_ms);

// One line per run, always with trace_hash=<16 hex digits>.
std::string SummaryLine(const RunResult& result, int64_t wall_ms);

// A readable account of one run: the world, the faults, checks, workloads.
std::string Summary(const RunResult& result);

}  // namespace charybdis::sim
