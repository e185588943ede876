#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace charybdis {

// Nearest-rank percentile (0 < p <= 100) of the samples; 0 when empty. For
// the reports of the sim/ and node/ tools.
inline int64_t Percentile(std::vector<int64_t> samples, double p) {
  if (samples.empty()) return 0;
  const auto rank = static_cast<size_t>(p / 100.0 * static_cast<double>(samples.size()) + 0.999999);
  const size_t index = std::clamp<size_t>(rank, 1, samples.size()) - 1;
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(index),
                   samples.end());
  return samples[index];
}

}  // namespace charybdis
