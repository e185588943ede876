#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "core/env/probe.h"

namespace charybdis::sim {

// Counts the probes of core/env/probe.h that a run reached (every listed
// probe is present, reached or not, so a report names the missed ones).
class SimProbes final : public Probes {
 public:
  SimProbes();
  void Reached(std::string_view probe) override;
  const std::map<std::string, uint64_t, std::less<>>& hits() const { return hits_; }

 private:
  std::map<std::string, uint64_t, std::less<>> hits_;
};

}  // namespace charybdis::sim
