// `./charybdis sim`: runs scenarios at seeds, checks determinism, writes
// traces and reports. The runner alone reads the wall clock, to time itself;
// everything inside a simulation runs on simulated time.

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "sim/options.h"
#include "sim/report.h"
#include "sim/run.h"
#include "sim/trace_diff.h"

namespace charybdis::sim {
namespace {

constexpr int kExitPassed = 0;
constexpr int kExitCheckFailed = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitLiveness = 3;
constexpr int kExitNondeterministic = 4;

struct Failure {
  std::string scenario_path;
  uint64_t seed;
  std::string why;
  int exit_code;
};

std::string TraceOf(const LoadedScenario& scenario, uint64_t seed) {
  char* buffer = nullptr;
  size_t size = 0;
  std::FILE* file = open_memstream(&buffer, &size);
  RunScenario(scenario, seed, file);
  std::fclose(file);
  std::string trace(buffer, size);
  std::free(buffer);
  return trace;
}

// Runs the seed twice more with tracing and names the first event where the
// two runs part.
std::string TracedDivergence(const LoadedScenario& scenario, uint64_t seed) {
  return FirstDivergence(TraceOf(scenario, seed), TraceOf(scenario, seed));
}

int64_t MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

int ExitCodeOf(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPassed: return kExitPassed;
    case Outcome::kCheckFailed: return kExitCheckFailed;
    case Outcome::kLiveness: return kExitLiveness;
  }
  return kExitCheckFailed;
}

// Determinism beats correctness beats liveness when several runs fail.
int WorseExitCode(int a, int b) {
  auto rank = [](int code) {
    switch (code) {
      case kExitNondeterministic: return 3;
      case kExitCheckFailed: return 2;
      case kExitLiveness: return 1;
      default: return 0;
    }
  };
  return rank(a) >= rank(b) ? a : b;
}

std::string FailedChecks(const RunResult& result) {
  std::string text;
  for (const CheckResult& check : result.checks) {
    if (!check.passed) absl::StrAppend(&text, text.empty() ? "" : "; ", check.name, ": ", check.detail);
  }
  return text.empty() ? "work unfinished at the time limit" : text;
}

int Main(const std::vector<std::string>& args) {
  absl::StatusOr<Options> parsed = ParseOptions(args);
  if (!parsed.ok()) {
    std::cerr << "charybdis sim: " << parsed.status().message() << "\n";
    return kExitBadInput;
  }
  const Options& options = *parsed;
  if (options.help) {
    std::cout << kUsage;
    return kExitPassed;
  }
  std::vector<LoadedScenario> scenarios;
  for (const std::string& path : options.scenarios) {
    absl::StatusOr<LoadedScenario> loaded = LoadScenario(path);
    if (!loaded.ok()) {
      std::cerr << loaded.status().message() << "\n";
      return kExitBadInput;
    }
    scenarios.push_back(std::move(*loaded));
  }
  if (!options.history_out.empty()) std::ofstream(options.history_out, std::ios::trunc);
  std::FILE* trace = nullptr;
  if (!options.trace_out.empty()) {
    trace = std::fopen(options.trace_out.c_str(), "w");
    if (trace == nullptr) {
      std::cerr << "charybdis sim: --trace_out: cannot write " << options.trace_out << "\n";
      return kExitBadInput;
    }
  }

  const uint64_t seeds = options.last_seed - options.first_seed + 1;
  const uint64_t total = seeds * scenarios.size();
  const bool sweep = total > 1;
  const bool progress_to_terminal = isatty(STDERR_FILENO);
  nlohmann::json reports = nlohmann::json::array();
  std::vector<Failure> failures;
  int exit_code = kExitPassed;
  uint64_t done = 0;
  const auto sweep_start = std::chrono::steady_clock::now();
  for (const LoadedScenario& scenario : scenarios) {
    for (uint64_t seed = options.first_seed;; seed++) {
      if (trace != nullptr) {
        std::fprintf(trace, "# scenario=%s seed=%llu\n", scenario.path.c_str(),
                     static_cast<unsigned long long>(seed));
      }
      const auto start = std::chrono::steady_clock::now();
      std::ofstream history;
      if (!options.history_out.empty()) {
        history.open(options.history_out, std::ios::app);
        if (!history) {
          std::cerr << "charybdis sim: --history_out: cannot write " << options.history_out << "\n";
          return kExitBadInput;
        }
      }
      const RunResult result =
          RunScenario(scenario, seed, trace, history.is_open() ? &history : nullptr);
      const int64_t wall_ms = MillisSince(start);
      int code = ExitCodeOf(result.outcome);
      std::string why = code == kExitPassed ? "" : FailedChecks(result);
      if (options.check_determinism) {
        const RunResult again = RunScenario(scenario, seed, nullptr);
        if (again.trace_hash != result.trace_hash || again.events != result.events) {
          code = kExitNondeterministic;
          why = absl::StrCat("nondeterministic: trace_hash ", HexHash(result.trace_hash), " then ",
                             HexHash(again.trace_hash), "; ", TracedDivergence(scenario, seed));
        }
      }
      std::cout << SummaryLine(result, wall_ms) << "\n";
      if (!sweep) std::cout << Summary(result);
      if (code != kExitPassed) {
        failures.push_back(Failure{scenario.path, seed, why, code});
        exit_code = WorseExitCode(exit_code, code);
      }
      if (!options.report.empty()) reports.push_back(ReportJson(result, wall_ms));
      done++;
      if (sweep && (progress_to_terminal || done % 50 == 0 || done == total)) {
        std::cerr << (progress_to_terminal ? "\r" : "") << "[" << done << "/" << total << "] "
                  << failures.size() << " failed, " << MillisSince(sweep_start) << " ms"
                  << (progress_to_terminal && done < total ? "" : "\n") << std::flush;
      }
      if (seed == options.last_seed) break;
    }
  }
  if (trace != nullptr) std::fclose(trace);
  if (!options.report.empty()) {
    std::ofstream out(options.report);
    out << (total == 1 ? reports[0] : reports).dump(2) << "\n";
    if (!out) {
      std::cerr << "charybdis sim: --report: cannot write " << options.report << "\n";
      return kExitBadInput;
    }
  }
  if (!failures.empty()) {
    std::cout << failures.size() << " of " << total << " runs failed:\n";
    for (const Failure& failure : failures) {
      std::cout << "  " << failure.scenario_path << " seed " << failure.seed << ": " << failure.why
                << "\n    replay: ./charybdis sim --scenario=" << failure.scenario_path
                << " --seed=" << failure.seed << "\n";
    }
  } else if (sweep) {
    std::cout << "all " << total << " runs passed\n";
  }
  return exit_code;
}

}  // namespace
}  // namespace charybdis::sim

int main(int argc, char** argv) {
  return charybdis::sim::Main(std::vector<std::string>(argv + 1, argv + argc));
}
