#include "sim/report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/json_text.h"

namespace charybdis::sim {

namespace {

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPassed: return "PASS";
    case Outcome::kCheckFailed: return "FAIL";
    case Outcome::kLiveness: return "LIVENESS";
  }
  return "?";
}

}  // namespace

std::string HexHash(uint64_t hash) { return absl::StrFormat("%016x", hash); }

nlohmann::json ReportJson(const RunResult& result, int64_t wall_ms) {
  nlohmann::json checks = nlohmann::json::array();
  for (const CheckResult& check : result.checks) {
    checks.push_back({{"name", check.name}, {"passed", check.passed}, {"detail", check.detail}});
  }
  nlohmann::json report = {
      {"scenario", result.scenario},
      {"seed", result.seed},
      {"trace_hash", HexHash(result.trace_hash)},
      {"events", result.events},
      {"simulated_ms", result.simulated / kMillisecond},
      {"wall_ms", wall_ms},
      {"outcome", OutcomeName(result.outcome)},
      {"checks", checks},
      {"workloads", result.workloads},
  };
  report.update(result.details);
  return report;
}

std::string SummaryLine(const RunResult& result, int64_t wall_ms) {
  return absl::StrCat(result.scenario, " seed=", result.seed,
                      " trace_hash=", HexHash(result.trace_hash), " events=", result.events,
                      " simulated_ms=", result.simulated / kMillisecond, " wall_ms=", wall_ms, " ",
                      OutcomeName(result.outcome));
}

std::string Summary(const RunResult& result) {
  std::string text = absl::StrCat("  world: ", result.details["world"].get<std::string>(), "\n");
  const auto& faults = result.details["faults"];
  absl::StrAppend(&text, "  faults applied: ", faults.size(), "\n");
  constexpr size_t kFaultsShown = 30;
  for (size_t i = 0; i < faults.size() && i < kFaultsShown; i++) {
    absl::StrAppend(&text, "    ", faults[i].get<std::string>(), "\n");
  }
  if (faults.size() > kFaultsShown) {
    absl::StrAppend(&text, "    ... ", faults.size() - kFaultsShown, " more in --report\n");
  }
  for (const CheckResult& check : result.checks) {
    absl::StrAppend(&text, "  check ", check.name, ": ", check.passed ? "passed" : "FAILED",
                    check.detail.empty() ? "" : " (", check.detail, check.detail.empty() ? "" : ")",
                    "\n");
  }
  for (const auto& workload : result.workloads) {
    absl::StrAppend(&text, "  workload ", JsonText(workload), "\n");
  }
  return text;
}

}  // namespace charybdis::sim
