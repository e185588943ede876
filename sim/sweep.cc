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
#include "core/env/assert.h"
#include "sim/child_pipe.h"
#include "sim/exit_codes.h"
#include "sim/json_text.h"
#include "sim/report.h"
#include "sim/run.h"
#include "sim/trace_diff.h"

namespace charybdis::sim {

namespace {

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

// Runs tasks first, first + jobs, ... and writes one JSON line per run.
[[noreturn]] void Worker(const std::vector<LoadedScenario>& scenarios,
                         const std::vector<std::pair<size_t, uint64_t>>& tasks, size_t first,
                         const SweepOptions& options, int out) {
  for (size_t i = first; i < tasks.size(); i += options.jobs) {
    const RunRecord record = RunOne(scenarios, tasks[i].first, tasks[i].second, options);
    WriteAllOrExit(out, JsonText(record.ToJson()) + "\n");
  }
  close(out);
  _exit(0);
}

// A worker process and the task it is on (its records arrive in order).
struct WorkerProcess {
  pid_t pid = -1;
  int pipe = -1;  // -1 once it has ended
  size_t task = 0;
  std::string partial;
};

WorkerProcess StartWorker(const std::vector<LoadedScenario>& scenarios,
                          const std::vector<std::pair<size_t, uint64_t>>& tasks, size_t first,
                          const SweepOptions& options, const std::vector<WorkerProcess>& others) {
  int fds[2];
  CHARYBDIS_ASSERT(pipe(fds) == 0);
  std::fflush(nullptr);
  const pid_t pid = fork();
  CHARYBDIS_ASSERT(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    for (const WorkerProcess& other : others) {
      if (other.pipe >= 0) close(other.pipe);
    }
    Worker(scenarios, tasks, first, options, fds[1]);
  }
  close(fds[1]);
  return WorkerProcess{pid, fds[0], first, ""};
}

// The record of a run that killed its worker (an assertion, a signal): the
// sweep goes on and names the seed to replay.
RunRecord CrashRecord(const std::vector<LoadedScenario>& scenarios, size_t scenario, uint64_t seed,
                      int status, bool want_report) {
  const std::string how = WIFSIGNALED(status) ? absl::StrCat("signal ", WTERMSIG(status))
                                              : absl::StrCat("exit ", WEXITSTATUS(status));
  RunRecord record;
  record.scenario = scenario;
  record.seed = seed;
  record.exit_code = kExitCheckFailed;
  record.summary_line = absl::StrCat(scenarios[scenario].spec.name(), " seed=", seed, " CRASHED (", how, ")");
  record.why = absl::StrCat("the run crashed (", how,
                            "): an invariant assertion failed or the simulator broke; replay the "
                            "seed alone to see where");
  if (want_report) {
    record.report = {{"scenario_path", scenarios[scenario].path}, {"seed", seed},
                     {"exit_code", record.exit_code}, {"why", record.why}};
  }
  record.coverage = {{"probes", nlohmann::json::object()}, {"buggify", nlohmann::json::object()}};
  return record;
}

std::vector<RunRecord> SweepInWorkers(const std::vector<LoadedScenario>& scenarios,
                                      const std::vector<std::pair<size_t, uint64_t>>& tasks,
                                      const SweepOptions& options,
                                      const std::function<void(size_t, size_t)>& progress) {
  std::vector<WorkerProcess> workers;
  for (size_t first = 0; first < options.jobs && first < tasks.size(); first++) {
    workers.push_back(StartWorker(scenarios, tasks, first, options, workers));
  }
  std::vector<RunRecord> records;
  size_t failed = 0;
  auto add = [&](RunRecord record) {
    failed += record.exit_code != 0;
    records.push_back(std::move(record));
    progress(records.size(), failed);
  };
  while (std::any_of(workers.begin(), workers.end(), [](const auto& w) { return w.pipe >= 0; })) {
    std::vector<pollfd> polls;
    for (const WorkerProcess& worker : workers) polls.push_back(pollfd{worker.pipe, POLLIN, 0});
    CHARYBDIS_ASSERT(poll(polls.data(), polls.size(), -1) >= 0);
    for (size_t i = 0; i < polls.size(); i++) {
      if (workers[i].pipe < 0 || !(polls[i].revents & (POLLIN | POLLHUP))) continue;
      char buffer[65536];
      const ssize_t n = read(workers[i].pipe, buffer, sizeof buffer);
      if (n > 0) {
        WorkerProcess& worker = workers[i];
        worker.partial.append(buffer, static_cast<size_t>(n));
        size_t newline;
        while ((newline = worker.partial.find('\n')) != std::string::npos) {
          add(RunRecord::FromJson(nlohmann::json::parse(worker.partial.substr(0, newline))));
          worker.partial.erase(0, newline + 1);
          worker.task += options.jobs;
        }
        continue;
      }
      close(workers[i].pipe);
      workers[i].pipe = -1;
      int status = 0;
      waitpid(workers[i].pid, &status, 0);
      const size_t task = workers[i].task;
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        CHARYBDIS_ASSERT(task >= tasks.size());
        continue;
      }
      CHARYBDIS_ASSERT(task < tasks.size());
      add(CrashRecord(scenarios, tasks[task].first, tasks[task].second, status, options.want_report));
      if (task + options.jobs < tasks.size()) {
        workers[i] = StartWorker(scenarios, tasks, task + options.jobs, options, workers);
      }
    }
  }
  CHARYBDIS_ASSERT(records.size() == tasks.size());
  std::sort(records.begin(), records.end(), [](const RunRecord& a, const RunRecord& b) {
    return std::tie(a.scenario, a.seed) < std::tie(b.scenario, b.seed);
  });
  return records;
}

}  // namespace

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
