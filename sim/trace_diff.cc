#include "sim/trace_diff.h"

#include <sstream>

#include "absl/strings/str_cat.h"

namespace charybdis::sim {

std::string FirstDivergence(const std::string& first_trace, const std::string& second_trace) {
  std::istringstream first(first_trace);
  std::istringstream second(second_trace);
  std::string a, b;
  for (uint64_t line = 1;; line++) {
    const bool more_a = static_cast<bool>(std::getline(first, a));
    const bool more_b = static_cast<bool>(std::getline(second, b));
    if (!more_a && !more_b) return "the traces agree";
    if (more_a != more_b || a != b) {
      return absl::StrCat("first divergence at trace line ", line, ":\n    run 1: ",
                          more_a ? a : "(end)", "\n    run 2: ", more_b ? b : "(end)");
    }
  }
}

}  // namespace charybdis::sim
