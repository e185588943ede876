#include "sim/merge.h"

#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include "nlohmann/json.hpp"
#include "sim/exit_codes.h"
#include "sim/json_text.h"

namespace charybdis::sim {

namespace {

// The runs of one report file (an object for one run, an array for several).
bool ReadRuns(const std::string& file, std::vector<nlohmann::json>& runs, std::ostream& err) {
  std::ifstream in(file);
  if (!in) {
    err << "charybdis sim: --merge: cannot read " << file << "\n";
    return false;
  }
  try {
    const nlohmann::json report = nlohmann::json::parse(in);
    for (const nlohmann::json& run : report.is_array() ? report : nlohmann::json::array({report})) {
      if (!run.contains("scenario_path") || !run.contains("seed") || !run.contains("exit_code")) {
        err << "charybdis sim: --merge: " << file << " is not a sweep report\n";
        return false;
      }
      runs.push_back(run);
    }
  } catch (const nlohmann::json::exception& error) {
    err << "charybdis sim: --merge: " << file << ": " << error.what() << "\n";
    return false;
  }
  return true;
}

}  // namespace

int MergeReports(const std::vector<std::string>& files, const std::string& report,
                 std::ostream& out, std::ostream& err) {
  std::vector<nlohmann::json> runs;
  for (const std::string& file : files) {
    if (!ReadRuns(file, runs, err)) return kExitBadInput;
  }
  std::map<std::tuple<std::string, uint64_t>, size_t> by_run;  // (scenario, seed) -> index
  for (size_t i = 0; i < runs.size(); i++) {
    const auto key = std::make_tuple(runs[i]["scenario_path"].get<std::string>(),
                                     runs[i]["seed"].get<uint64_t>());
    if (!by_run.emplace(key, i).second) {
      err << "charybdis sim: --merge: " << std::get<0>(key) << " seed " << std::get<1>(key)
          << " is in two slices\n";
      return kExitBadInput;
    }
  }
  int exit_code = kExitPassed;
  size_t failed = 0;
  std::map<std::string, uint64_t> probes;
  nlohmann::json merged = nlohmann::json::array();
  for (const auto& [key, index] : by_run) {
    const nlohmann::json& run = runs[index];
    const int code = run["exit_code"].get<int>();
    exit_code = WorseExitCode(exit_code, code);
    if (code != kExitPassed) {
      failed++;
      out << "  " << std::get<0>(key) << " seed " << std::get<1>(key) << ": "
          << run.value("why", "") << "\n    replay: ./charybdis sim --scenario=" << std::get<0>(key)
          << " --seed=" << std::get<1>(key) << "\n";
    }
    if (run.contains("probes")) {
      for (const auto& [probe, hits] : run["probes"].items()) probes[probe] += hits.get<uint64_t>();
    }
    merged.push_back(run);
  }
  std::set<std::string> missed;
  for (const auto& [probe, hits] : probes) {
    if (hits == 0) missed.insert(probe);
  }
  out << runs.size() << " runs from " << files.size() << " slices: " << failed << " failed\n";
  out << "probes never reached:";
  for (const std::string& probe : missed) out << " " << probe;
  out << (missed.empty() ? " none\n" : "\n");
  if (!report.empty()) {
    std::ofstream file(report);
    file << JsonText(merged, 2) << "\n";
    if (!file) {
      err << "charybdis sim: --report: cannot write " << report << "\n";
      return kExitBadInput;
    }
  }
  return exit_code;
}

}  // namespace charybdis::sim
