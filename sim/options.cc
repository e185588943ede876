#include "sim/options.h"

#include <algorithm>
#include <charconv>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace charybdis::sim {

const char kUsage[] = R"(usage: ./charybdis sim [flags]

Runs simulation scenarios. With no flags: every scenario in scenarios/ at seed 1.

  --scenario=FILE|DIR    a scenario file, or every *.textproto in a directory
                         (repeatable)
  --seed=N               run seed N (default 1)
  --seeds=A-B            run seeds A to B, with a progress line; failing seeds
                         are listed with the command that replays each
  --check_determinism    run every seed twice and fail on any difference
  --trace_out=FILE       write one line per processed event
  --report=FILE          write a JSON report (an object for one run, an array
                         for several)
  --history_out=FILE     write the client operations, one JSON object per line
  --check_history=FILE   run the scenario's history checks (those of
                         docs/scenarios.md that need only the history,
                         e.g. linearizable) on a recorded history (from
                         --history_out or `charybdis-ctl run-scenario`);
                         without --scenario, check a Jepsen-style history
                         for linearizability alone (operations without a
                         consistency are register operations). A check
                         with nothing to check fails
  --jobs=N               run seeds in N worker processes (not with --trace_out)
  --shard=I/N            run only slice I of N of the seeds (1 <= I <= N):
                         seeds A+I-1, A+I-1+N, ...; N machines with I = 1..N
                         together run the whole range (a CI matrix, indexed
                         Jobs, Slurm arrays); give each --report=FILE
  --shrink               reduce the failing run of one --scenario at one --seed
                         to a small scenario that fails the same check: the
                         faults that happened become a script, which delta
                         debugging cuts and shortens; then workloads,
                         clients, operations, keys and nodes are cut. Writes
                         the scenario and prints the command that replays it
  --profile=FILE         run every scenario on a measured latency profile
                         (`charybdis-ctl calibrate` writes one): its network
                         intra_dc/intra_node and storage read/write/sync
                         replace the scenario's; loss and faults stay
  --shrink_out=FILE      where --shrink writes (default NAME-seedN-shrunk.textproto)
  --shrink_runs=N        at most N candidate runs (default 400)
  --every_crash_point=N  every crash point of node N, not a random one: for one
                         --scenario (a small one) and one --seed, crash node N
                         at each of its synced storage writes in turn (before
                         it is durable with a power cut; after, with a crash
                         and with a power cut), restart it, and run the
                         scenario's checks after each; lists the points that
                         fail
  --crash_restart_ms=MS  how long after such a crash the node restarts (1000)
  --merge=F1,F2,...      combine the --report files of slices: the failing
                         seeds with their replay commands, the probes no
                         slice reached, the worst exit code (with --report,
                         the merged report)

exit codes: 0 all checks passed, 1 a correctness check failed, 2 bad input or
usage, 3 liveness (work unfinished at the time limit), 4 nondeterminism
)";

namespace {

absl::StatusOr<uint64_t> ParseSeed(const std::string& flag, std::string_view text) {
  uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": \"", std::string(text), "\" is not a non-negative integer"));
  }
  return value;
}

absl::Status AddScenario(const std::string& path, std::vector<std::string>& scenarios) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (fs::is_directory(path, error)) {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(path, error)) {
      if (entry.path().extension() == ".textproto") found.push_back(entry.path().string());
    }
    if (found.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--scenario: directory ", path, " holds no *.textproto files"));
    }
    std::sort(found.begin(), found.end());  // a stable order on every machine
    scenarios.insert(scenarios.end(), found.begin(), found.end());
    return absl::OkStatus();
  }
  if (!fs::exists(path, error)) {
    return absl::InvalidArgumentError(absl::StrCat("--scenario: ", path, ": no such file"));
  }
  scenarios.push_back(path);
  return absl::OkStatus();
}

// --seeds=A-B
absl::Status ParseSeedRange(const std::string& value, Options& options) {
  std::vector<std::string> bounds = absl::StrSplit(value, '-');
  if (bounds.size() != 2) {
    return absl::InvalidArgumentError(absl::StrCat("--seeds: \"", value, "\" is not A-B"));
  }
  absl::StatusOr<uint64_t> first = ParseSeed("--seeds", bounds[0]);
  if (!first.ok()) return first.status();
  absl::StatusOr<uint64_t> last = ParseSeed("--seeds", bounds[1]);
  if (!last.ok()) return last.status();
  if (*first > *last) {
    return absl::InvalidArgumentError(absl::StrCat("--seeds: ", value, " is an empty range"));
  }
  options.first_seed = *first;
  options.last_seed = *last;
  return absl::OkStatus();
}

// --shard=I/N
absl::Status ParseShard(const std::string& value, Options& options) {
  std::vector<std::string> parts = absl::StrSplit(value, '/');
  absl::StatusOr<uint64_t> index =
      parts.size() == 2 ? ParseSeed("--shard", parts[0]) : absl::InvalidArgumentError("");
  absl::StatusOr<uint64_t> count =
      parts.size() == 2 ? ParseSeed("--shard", parts[1]) : absl::InvalidArgumentError("");
  if (!index.ok() || !count.ok() || *index < 1 || *index > *count) {
    return absl::InvalidArgumentError(
        absl::StrCat("--shard: \"", value, "\" is not I/N with 1 <= I <= N"));
  }
  options.shard_index = *index - 1;
  options.shard_count = *count;
  return absl::OkStatus();
}

// One flag into `options` (scenarios are gathered, and expanded once all
// flags are in).
absl::Status ParseFlag(const std::string& arg, Options& options,
                       std::vector<std::string>& scenario_flags, bool& seed_given) {
  const size_t equals = arg.find('=');
  const std::string name = arg.substr(0, equals);
  const std::string value = equals == std::string::npos ? "" : arg.substr(equals + 1);
  const bool has_value = equals != std::string::npos;
  if (name == "--help" || name == "-h") {
    options.help = true;
  } else if (name == "--shrink" && !has_value) {
    options.shrink = true;
  } else if (name == "--profile" && has_value && !value.empty()) {
    options.profile = value;
  } else if (name == "--shrink_out" && has_value && !value.empty()) {
    options.shrink_out = value;
  } else if (name == "--shrink_runs" && has_value) {
    absl::StatusOr<uint64_t> runs = ParseSeed("--shrink_runs", value);
    if (!runs.ok()) return runs.status();
    if (*runs < 1) return absl::InvalidArgumentError("--shrink_runs: at least 1");
    options.shrink_runs = *runs;
  } else if (name == "--every_crash_point" && has_value) {
    absl::StatusOr<uint64_t> node = ParseSeed("--every_crash_point", value);
    if (!node.ok()) return node.status();
    if (*node < 1 || *node > 1000) return absl::InvalidArgumentError("--every_crash_point: a node number");
    options.every_crash_point = static_cast<uint32_t>(*node);
  } else if (name == "--crash_restart_ms" && has_value) {
    absl::StatusOr<uint64_t> ms = ParseSeed("--crash_restart_ms", value);
    if (!ms.ok()) return ms.status();
    if (*ms < 1) return absl::InvalidArgumentError("--crash_restart_ms: at least 1");
    options.crash_restart_ms = *ms;
  } else if (name == "--check_determinism" && !has_value) {
    options.check_determinism = true;
  } else if (name == "--scenario" && has_value) {
    scenario_flags.push_back(value);
  } else if (name == "--seed" && has_value) {
    if (seed_given) return absl::InvalidArgumentError("give one of --seed and --seeds, once");
    seed_given = true;
    absl::StatusOr<uint64_t> seed = ParseSeed("--seed", value);
    if (!seed.ok()) return seed.status();
    options.first_seed = options.last_seed = *seed;
  } else if (name == "--seeds" && has_value) {
    if (seed_given) return absl::InvalidArgumentError("give one of --seed and --seeds, once");
    seed_given = true;
    return ParseSeedRange(value, options);
  } else if (name == "--trace_out" && has_value && !value.empty()) {
    options.trace_out = value;
  } else if (name == "--report" && has_value && !value.empty()) {
    options.report = value;
  } else if (name == "--history_out" && has_value && !value.empty()) {
    options.history_out = value;
  } else if (name == "--check_history" && has_value && !value.empty()) {
    options.check_history = value;
  } else if (name == "--shard" && has_value) {
    return ParseShard(value, options);
  } else if (name == "--merge" && has_value && !value.empty()) {
    options.merge = absl::StrSplit(value, ',', absl::SkipEmpty());
  } else if (name == "--jobs" && has_value) {
    absl::StatusOr<uint64_t> jobs = ParseSeed("--jobs", value);
    if (!jobs.ok()) return jobs.status();
    if (*jobs < 1 || *jobs > 64) return absl::InvalidArgumentError("--jobs: between 1 and 64");
    options.jobs = static_cast<unsigned>(*jobs);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown or malformed flag \"", arg, "\" (see --help)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Options> ParseOptions(const std::vector<std::string>& args) {
  Options options;
  std::vector<std::string> scenario_flags;
  bool seed_given = false;
  for (const std::string& arg : args) {
    if (absl::Status status = ParseFlag(arg, options, scenario_flags, seed_given); !status.ok()) {
      return status;
    }
  }
  if (options.help) return options;
  if (!options.history_out.empty() && options.first_seed != options.last_seed) {
    return absl::InvalidArgumentError("--history_out takes one run: give --seed, not --seeds");
  }
  if (!options.trace_out.empty() && options.jobs > 1) {
    return absl::InvalidArgumentError("--trace_out writes one file: use it with --jobs=1");
  }
  if (options.shrink && (scenario_flags.size() != 1 || options.first_seed != options.last_seed)) {
    return absl::InvalidArgumentError("--shrink takes one --scenario and one --seed");
  }
  if (options.every_crash_point > 0 &&
      (scenario_flags.size() != 1 || options.first_seed != options.last_seed)) {
    return absl::InvalidArgumentError("--every_crash_point takes one --scenario and one --seed");
  }
  options.scenarios_given = !scenario_flags.empty();
  if (scenario_flags.empty()) scenario_flags.push_back("scenarios");
  for (const std::string& path : scenario_flags) {
    if (absl::Status status = AddScenario(path, options.scenarios); !status.ok()) return status;
  }
  return options;
}

}  // namespace charybdis::sim
