#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "core/env/buggify.h"
#include "core/env/random.h"

namespace charybdis::sim {

// Each seed enables a quarter of the sites it meets; an enabled site fires
// on a quarter of its calls. Counts per site go into the report, so a sweep
// shows which rare paths it reached.
class SimBuggify final : public Buggify {
 public:
  SimBuggify(bool enabled, Random random) : enabled_(enabled), random_(random) {}

  bool Fires(std::string_view site) override;

  struct Site {
    bool enabled = false;
    uint64_t fired = 0;
  };
  // Ordered by name, for a stable report.
  const std::map<std::string, Site, std::less<>>& sites() const { return sites_; }

 private:
  bool enabled_;
  Random random_;
  std::map<std::string, Site, std::less<>> sites_;
};

}  // namespace charybdis::sim
