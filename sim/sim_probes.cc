#include "sim/sim_probes.h"

#include "core/env/assert.h"

namespace charybdis::sim {

SimProbes::SimProbes() {
  for (std::string_view probe : kProbes) hits_.emplace(probe, 0);
}

void SimProbes::Reached(std::string_view probe) {
  auto it = hits_.find(probe);
  CHARYBDIS_ASSERT(it != hits_.end());  // CHARYBDIS_PROBE checks names at compile time
  it->second++;
}

}  // namespace charybdis::sim
