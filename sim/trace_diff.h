#pragma once

#include <string>

namespace charybdis::sim {

// Names the first line where two traces of the same seed differ, or says
// they agree.
std::string FirstDivergence(const std::string& first_trace, const std::string& second_trace);

}  // namespace charybdis::sim
