#pragma once

#include <string>

#include "nlohmann/json.hpp"

namespace charybdis::sim {

// JSON as text. Strings from a run (values read, check details) may hold
// bytes that are not UTF-8, e.g. a corrupt value a checker reports: they
// become U+FFFD instead of throwing.
inline std::string JsonText(const nlohmann::json& json, int indent = -1) {
  return json.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace charybdis::sim
