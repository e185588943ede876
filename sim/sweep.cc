// Runs seeds, in this process or in worker processes. The runner may time
// itself and fork: nothing inside a simulation does either.

#include "sim/sweep.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>

#include "absl/strings/str_cat.h"
#include "core/assert.h"
#include "sim/exit_codes.h"
#include "sim/report.h"
#include "sim/run.h"
#include "sim/trace_diff.h"

namespace charybdis::sim {

namespace {

int ExitCodeOf(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPassed: return kExitPassed;
    case Outcome::kCheckFailed: return kExitCheckFailed;
    case Outcome::kLiveness: return kExitLiveness;
  }
  return kExitCheckFailed;
}

std::string FailedChecks(const RunResult& result) {
  std::string text;
  for (const CheckResult& check : result.checks) {
    if (!check.passed) absl::StrAppend(&text, text.empty() ? "" : "; ", check.name, ": ", check.detail);
  }
  return text.empty() ? "work unfinished at the time limit" : text;
}

RunRecord RunOne(const std::vector<LoadedScenario>& scenarios, size_t index, uint64_t seed,
                 const SweepOptions& options) {
  const LoadedScenario& scenario = scenarios[index];
  if (options.trace != nullptr) {
    std::fprintf(options.trace, "# scenario=%s seed=%llu\n", scenario.path.c_str(),
                 static_cast<unsigned long long>(seed));
  }
  const auto start = std::chrono::steady_clock::now();
  const RunResult result = RunScenario(scenario, seed, options.trace, options.history);
  const int64_t wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count();
  RunRecord record;
  record.scenario = index;
  record.seed = seed;
  record.exit_code = ExitCodeOf(result.outcome);
  record.summary_line = SummaryLine(result, wall_ms);
  record.summary = Summary(result);
  if (record.exit_code != 0) record.why = FailedChecks(result);
  if (options.check_determinism) {
    const RunResult again = RunScenario(scenario, seed, nullptr);
    if (again.trace_hash != result.trace_hash || again.events != result.events) {
      record.exit_code = kExitNondeterministic;
      // Run the seed twice more with tracing to name the first divergence.
      record.why = absl::StrCat("nondeterministic: trace_hash ", HexHash(result.trace_hash),
                                " then ", HexHash(again.trace_hash), "; ",
                                FirstDivergence(TraceOfRun(scenario, seed), TraceOfRun(scenario, seed)));
    }
  }
  if (options.want_report) {
    record.report = ReportJson(result, wall_ms);
    // What --merge needs to combine slices and replay their failures.
    record.report["scenario_path"] = scenario.path;
    record.report["exit_code"] = record.exit_code;
    record.report["why"] = record.why;
  }
  nlohmann::json fires = nlohmann::json::object();
  for (const auto& [site, state] : result.details["buggify"].items()) fires[site] = state["fired"];
  record.coverage = {{"probes", result.details["probes"]}, {"buggify", fires}};
  return record;
}

// Runs tasks worker, worker + jobs, ... and writes one JSON line per run.
[[noreturn]] void Worker(const std::vector<LoadedScenario>& scenarios,
                         const std::vector<std::pair<size_t, uint64_t>>& tasks, unsigned worker,
                         const SweepOptions& options, int out) {
  for (size_t i = worker; i < tasks.size(); i += options.jobs) {
    const std::string line = RunOne(scenarios, tasks[i].first, tasks[i].second, options).ToJson().dump() + "\n";
    for (size_t written = 0; written < line.size();) {
      const ssize_t n = write(out, line.data() + written, line.size() - written);
      if (n <= 0) _exit(70);
      written += static_cast<size_t>(n);
    }
  }
  close(out);
  _exit(0);
}

std::vector<RunRecord> SweepInWorkers(const std::vector<LoadedScenario>& scenarios,
                                      const std::vector<std::pair<size_t, uint64_t>>& tasks,
                                      const SweepOptions& options,
                                      const std::function<void(size_t, size_t)>& progress) {
  std::vector<int> pipes;
  std::vector<pid_t> workers;
  std::fflush(nullptr);
  for (unsigned worker = 0; worker < options.jobs; worker++) {
    int fds[2];
    CHARYBDIS_ASSERT(pipe(fds) == 0);
    const pid_t pid = fork();
    CHARYBDIS_ASSERT(pid >= 0);
    if (pid == 0) {
      close(fds[0]);
      for (int other : pipes) close(other);
      Worker(scenarios, tasks, worker, options, fds[1]);
    }
    close(fds[1]);
    pipes.push_back(fds[0]);
    workers.push_back(pid);
  }
  std::vector<RunRecord> records;
  std::vector<std::string> partial(pipes.size());
  size_t open = pipes.size();
  size_t failed = 0;
  while (open > 0) {
    std::vector<pollfd> polls;
    for (int fd : pipes) polls.push_back(pollfd{fd, POLLIN, 0});
    CHARYBDIS_ASSERT(poll(polls.data(), polls.size(), -1) >= 0);
    for (size_t i = 0; i < polls.size(); i++) {
      if (pipes[i] < 0 || !(polls[i].revents & (POLLIN | POLLHUP))) continue;
      char buffer[65536];
      const ssize_t n = read(pipes[i], buffer, sizeof buffer);
      if (n <= 0) {
        close(pipes[i]);
        pipes[i] = -1;
        open--;
        continue;
      }
      partial[i].append(buffer, static_cast<size_t>(n));
      size_t newline;
      while ((newline = partial[i].find('\n')) != std::string::npos) {
        records.push_back(RunRecord::FromJson(nlohmann::json::parse(partial[i].substr(0, newline))));
        partial[i].erase(0, newline + 1);
        failed += records.back().exit_code != 0;
        progress(records.size(), failed);
      }
    }
  }
  for (pid_t pid : workers) {
    int status = 0;
    waitpid(pid, &status, 0);
    CHARYBDIS_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  CHARYBDIS_ASSERT(records.size() == tasks.size());
  std::sort(records.begin(), records.end(), [](const RunRecord& a, const RunRecord& b) {
    return std::tie(a.scenario, a.seed) < std::tie(b.scenario, b.seed);
  });
  return records;
}

}  // namespace

nlohmann::json RunRecord::ToJson() const {
  return {{"scenario", scenario}, {"seed", seed},       {"exit_code", exit_code},
          {"summary_line", summary_line}, {"summary", summary}, {"why", why},
          {"report", report},   {"coverage", coverage}};
}

RunRecord RunRecord::FromJson(const nlohmann::json& json) {
  RunRecord record;
  record.scenario = json.at("scenario").get<size_t>();
  record.seed = json.at("seed").get<uint64_t>();
  record.exit_code = json.at("exit_code").get<int>();
  record.summary_line = json.at("summary_line").get<std::string>();
  record.summary = json.at("summary").get<std::string>();
  record.why = json.at("why").get<std::string>();
  record.report = json.at("report");
  record.coverage = json.at("coverage");
  return record;
}

std::vector<RunRecord> Sweep(const std::vector<LoadedScenario>& scenarios, uint64_t first,
                             uint64_t last, const SweepOptions& options,
                             const std::function<void(size_t, size_t)>& progress) {
  std::vector<std::pair<size_t, uint64_t>> tasks;
  for (size_t scenario = 0; scenario < scenarios.size(); scenario++) {
    for (uint64_t seed = first;; seed++) {
      // A slice of the range: every shard_count-th seed, from shard_index.
      if ((seed - first) % options.shard_count == options.shard_index) {
        tasks.emplace_back(scenario, seed);
      }
      if (seed == last) break;
    }
  }
  if (options.jobs > 1 && tasks.size() > 1) {
    CHARYBDIS_ASSERT(options.trace == nullptr);
    CHARYBDIS_ASSERT(options.history == nullptr);
    return SweepInWorkers(scenarios, tasks, options, progress);
  }
  std::vector<RunRecord> records;
  size_t failed = 0;
  for (const auto& [scenario, seed] : tasks) {
    records.push_back(RunOne(scenarios, scenario, seed, options));
    failed += records.back().exit_code != 0;
    progress(records.size(), failed);
  }
  return records;
}

}  // namespace charybdis::sim
