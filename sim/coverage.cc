#include "sim/coverage.h"

#include <cstdint>
#include <map>
#include <string>

#include "absl/strings/str_join.h"

namespace charybdis::sim {

namespace {

struct Totals {
  std::map<std::string, uint64_t> probes;  // every listed probe, reached or not
  std::map<std::string, uint64_t> fires;   // Buggify sites reached
};

// Over the runs of one scenario, or of all of them (SIZE_MAX).
Totals Add(const std::vector<RunRecord>& records, size_t scenario) {
  Totals totals;
  for (const RunRecord& record : records) {
    if (scenario != SIZE_MAX && record.scenario != scenario) continue;
    for (const auto& [probe, hits] : record.coverage.at("probes").items()) {
      totals.probes[probe] += hits.get<uint64_t>();
    }
    for (const auto& [site, fires] : record.coverage.at("buggify").items()) {
      totals.fires[site] += fires.get<uint64_t>();
    }
  }
  return totals;
}

std::string Counts(const std::map<std::string, uint64_t>& counts, bool reached) {
  std::vector<std::string> parts;
  for (const auto& [name, count] : counts) {
    if ((count > 0) == reached) parts.push_back(reached ? name + "=" + std::to_string(count) : name);
  }
  return parts.empty() ? "none" : absl::StrJoin(parts, " ");
}

}  // namespace

bool ReportCoverage(const std::vector<LoadedScenario>& scenarios,
                    const std::vector<RunRecord>& records, uint64_t first_seed,
                    uint64_t last_seed, std::ostream& out) {
  bool complete = true;
  for (size_t i = 0; i < scenarios.size(); i++) {
    const Totals totals = Add(records, i);
    const LoadedScenario& scenario = scenarios[i];
    size_t reached = 0;
    for (const auto& [probe, hits] : totals.probes) reached += hits > 0;
    out << "coverage " << scenario.path << " seeds " << first_seed << "-" << last_seed << ":\n"
        << "  buggify fired: " << Counts(totals.fires, true) << "\n"
        << "  buggify reached, never fired: " << Counts(totals.fires, false) << "\n"
        << "  probes reached (" << reached << " of " << totals.probes.size()
        << "): " << Counts(totals.probes, true) << "\n"
        << "  probes never reached: " << Counts(totals.probes, false) << "\n";
    for (const std::string& required : scenario.spec.checks().sweep_reaches_probe()) {
      auto it = totals.probes.find(required);
      if (it != totals.probes.end() && it->second > 0) continue;
      complete = false;
      out << "  FAILED: probe " << required << " (checks.sweep_reaches_probe) was reached by no seed\n";
    }
  }
  if (scenarios.size() > 1) {
    out << "coverage of the whole sweep: probes never reached: "
        << Counts(Add(records, SIZE_MAX).probes, false) << "\n";
  }
  return complete;
}

}  // namespace charybdis::sim
