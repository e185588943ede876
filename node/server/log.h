#pragma once

#include <string>
#include <utility>
#include <vector>

namespace charybdis::node {

// Structured logs: one JSON object per line on stderr, e.g.
// {"time":"2026-11-30T05:00:00.123Z","level":"info","event":"started","node":1}
void Log(const std::string& level, const std::string& event,
         const std::vector<std::pair<std::string, std::string>>& fields = {});

}  // namespace charybdis::node
