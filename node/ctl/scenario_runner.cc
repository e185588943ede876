#include "node/ctl/scenario_runner.h"

#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"
#include "node/server/config.h"
#include "node/ctl/history_recorder.h"
#include "node/local/local_cluster.h"
#include "node/ctl/real_faults.h"
#include "node/ctl/real_operations.h"
#include "node/ctl/real_workload.h"
#include "node/ctl/replica_check.h"

namespace charybdis::node {

namespace {

namespace fs = std::filesystem;

struct Check {
  std::string name;
  bool passed;
  std::string detail;
};

// What this runner cannot do with a scenario, or "".
std::string Unsupported(const scenario::Scenario& spec) {
  if (spec.topology().datacenter_size() != 1) return "only one datacenter is supported on a local cluster";
  for (const auto& workload : spec.workload()) {
    if (workload.has_operations()) continue;
    if (!workload.has_kv()) {
      return absl::StrCat("workload ", workload.name(), ": only kv and operations workloads run on real nodes");
    }
    if (workload.kv().lock_step_cas() || workload.kv().preload_keys() || workload.kv().key_count() == 0 ||
        workload.kv().read_after_write()) {
      return absl::StrCat("workload ", workload.name(),
                          ": lock_step_cas, preload_keys, read_after_write and fresh keys (key_count 0) "
                          "are simulation only");
    }
  }
  return "";
}

std::string ExtraConfig(const scenario::Scenario& spec) {
  std::string text;
  const auto& coordinator = spec.coordinator();
  if (coordinator.write_timeout_ms()) absl::StrAppend(&text, "write_timeout_ms: ", coordinator.write_timeout_ms(), "\n");
  if (coordinator.read_timeout_ms()) absl::StrAppend(&text, "read_timeout_ms: ", coordinator.read_timeout_ms(), "\n");
  if (coordinator.max_hint_window_ms()) absl::StrAppend(&text, "max_hint_window_ms: ", coordinator.max_hint_window_ms(), "\n");
  if (coordinator.hint_replay_interval_ms()) {
    absl::StrAppend(&text, "hint_replay_interval_ms: ", coordinator.hint_replay_interval_ms(), "\n");
  }
  if (spec.compaction_interval_ms()) {
    absl::StrAppend(&text, "compaction_interval_ms: ", spec.compaction_interval_ms(), "\n");
  }
  if (spec.failure_detector().heartbeat_interval_ms()) {
    absl::StrAppend(&text, "heartbeat_interval_ms: ", spec.failure_detector().heartbeat_interval_ms(), "\n");
  }
  if (spec.failure_detector().convict_after_ms()) {
    absl::StrAppend(&text, "convict_after_ms: ", spec.failure_detector().convict_after_ms(), "\n");
  }
  return text;
}

// Runs `binary --scenario=S --check_history=H`, one check per output line.
std::vector<Check> RunHistoryChecks(const std::string& binary, const std::string& scenario,
                                    const std::string& history) {
  const std::string command = absl::StrCat("'", binary, "' --scenario='", scenario, "' --check_history='",
                                           history, "' 2>&1");
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {{"history_checks", false, "cannot run " + binary}};
  std::string output;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;) output.append(buffer, n);
  const int status = pclose(pipe);
  std::vector<Check> checks;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    // "check NAME: passed (detail)" or "check NAME: FAILED (detail)"
    if (line.rfind("check ", 0) != 0) continue;
    const size_t colon = line.find(": ");
    const size_t open = line.find(" (", colon);
    const std::string verdict = line.substr(colon + 2, open - colon - 2);
    checks.push_back({line.substr(6, colon - 6), verdict == "passed",
                      open == std::string::npos ? "" : line.substr(open + 2, line.size() - open - 3)});
  }
  if (checks.empty() && WEXITSTATUS(status) != 0) checks.push_back({"history_checks", false, output});
  return checks;
}

// The scenario file, parsed, if this runner can run it (else a message and
// nullopt).
std::optional<scenario::Scenario> LoadRunnable(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  scenario::Scenario spec;
  if (!file || !google::protobuf::TextFormat::ParseFromString(text.str(), &spec)) {
    std::cerr << path << ": cannot read the scenario (check it with ./charybdis sim)\n";
    return std::nullopt;
  }
  if (const std::string problem = Unsupported(spec); !problem.empty()) {
    std::cerr << path << ": " << problem << "\n";
    return std::nullopt;
  }
  return spec;
}

// The local cluster for a scenario: its shape, or `nodes` nodes.
LocalCluster::Options ShapeOf(const scenario::Scenario& spec, uint32_t nodes) {
  LocalCluster::Options shape;
  uint32_t scenario_nodes = 0;
  for (const auto& rack : spec.topology().datacenter(0).rack()) scenario_nodes += rack.nodes();
  shape.nodes = nodes != 0 ? nodes : scenario_nodes;
  shape.shards = std::max<uint32_t>(spec.topology().shards_per_node(), 1);
  const auto& replication = spec.topology().replication();
  uint32_t factor = 3;
  for (const auto& datacenter : replication.datacenter()) factor = datacenter.replication_factor();
  if (replication.replication_factor()) factor = replication.replication_factor();
  shape.replication_factor = std::min(factor, shape.nodes);
  for (const auto& table : spec.schema().table()) {
    Table& config = shape.tables.emplace_back();
    config.set_name(table.name());
    *config.mutable_column() = table.column();
    config.set_tombstone_gc(table.tombstone_gc());
    if (table.has_gc_grace_seconds()) config.set_gc_grace_seconds(table.gc_grace_seconds());
    if (table.has_propagation_delay_seconds()) config.set_propagation_delay_seconds(table.propagation_delay_seconds());
  }
  shape.extra_config = ExtraConfig(spec);
  return shape;
}

struct Workloads {
  std::vector<std::unique_ptr<RealKvWorkload>> kv;
  std::vector<std::unique_ptr<RealOperations>> operations;
};

// Runs every workload on its own thread: each starts at start_ms, or when
// the one named `after` finished. Returns them once all have finished.
Workloads RunWorkloads(const scenario::Scenario& spec, const RunScenarioOptions& options, LocalCluster& cluster,
                       const TokenRing& ring, HistoryRecorder& history, Random& random,
                       std::chrono::steady_clock::time_point started) {
  Workloads workloads;
  std::atomic<uint64_t> next_process{0};
  std::mutex mutex;
  std::condition_variable finished_changed;
  std::set<std::string> finished;
  std::vector<std::thread> runners;
  for (int i = 0; i < spec.workload_size(); i++) {
    const auto& workload = spec.workload(i);
    if (workload.has_operations()) {
      workloads.operations.push_back(std::make_unique<RealOperations>(workload.name(), workload.operations(),
                                                                      options.directory, options.node_binary));
      runners.emplace_back([&, runner = workloads.operations.back().get()] {
        runner->Run(started);
        std::lock_guard<std::mutex> lock(mutex);
        finished.insert(runner->name());
        finished_changed.notify_all();
      });
      continue;
    }
    workloads.kv.push_back(std::make_unique<RealKvWorkload>(workload.name(), workload.kv(), cluster, ring,
                                                            history, next_process, random.Fork(100 + i)));
    RealKvWorkload* runner = workloads.kv.back().get();
    runners.emplace_back([&, runner, after = workload.after(), start_ms = workload.kv().start_ms()] {
      if (!after.empty()) {
        std::unique_lock<std::mutex> lock(mutex);
        finished_changed.wait(lock, [&] { return finished.count(after) > 0; });
      }
      std::this_thread::sleep_until(started + std::chrono::milliseconds(start_ms));
      std::cout << "  workload " << runner->name() << " started" << std::endl;
      runner->Run();
      std::lock_guard<std::mutex> lock(mutex);
      finished.insert(runner->name());
      finished_changed.notify_all();
    });
  }
  for (auto& runner : runners) runner.join();
  return workloads;
}

// Each workload's outcome and expectations.
std::vector<Check> WorkloadChecks(const Workloads& workloads) {
  std::vector<Check> checks;
  for (const auto& operations : workloads.operations) {
    const bool finished = operations->failure().empty();
    checks.push_back({operations->name() + ".operations_finished", finished,
                      finished ? operations->outcomes() : operations->failure()});
  }
  for (const auto& workload : workloads.kv) {
    const auto& outcome = workload->outcome();
    std::string errors;
    for (const auto& [name, count] : outcome.errors) absl::StrAppend(&errors, " ", name, "=", count);
    std::cout << "  workload " << workload->name() << ": " << outcome.ok << " ok, " << outcome.failed
              << " failed, " << outcome.unknown << " unknown;" << errors << "\n";
    const std::string unmet = workload->UnmetExpectation();
    checks.push_back({workload->name() + ".expect", unmet.empty(), unmet.empty() ? "met" : unmet});
  }
  return checks;
}

// The scenario's checks once the workloads are done: views, the history
// (by the simulator's checker binary) and the replicas' disks.
void ClusterChecks(const scenario::Scenario& spec, const RunScenarioOptions& options,
                   LocalCluster& cluster, const TokenRing& ring, const std::string& history_path,
                   std::vector<Check>& checks) {
  const uint64_t settle_ms = std::max<uint64_t>(spec.checks().settle_ms(), 5000);
  if (spec.checks().views_converge()) {
    const absl::Status views = cluster.WaitForViews(static_cast<int>(settle_ms));
    checks.push_back({"views_converge", views.ok(),
                      views.ok() ? "every node sees every node up" : std::string(views.message())});
  }
  if (spec.checks().linearizable() || spec.checks().read_your_writes()) {
    for (Check& check : RunHistoryChecks(options.checker_binary, options.scenario_path, history_path)) {
      checks.push_back(std::move(check));
    }
  }
  const scenario::Workload* first_kv = nullptr;
  for (const auto& workload : spec.workload()) {
    if (first_kv == nullptr && workload.has_kv()) first_kv = &workload;
  }
  if (spec.checks().replicas_converge() && first_kv != nullptr) {
    // Give hints and read repair their time, then look at the disks (the
    // scenarios' workloads share one table and key range) of the owners
    // now, which operations may have changed.
    std::this_thread::sleep_for(std::chrono::milliseconds(settle_ms));
    absl::StatusOr<TokenRing> owners = OwnersRingOf(cluster, ring.layout().replication, ring.layout().shards_per_node);
    (void)cluster.StopAll();
    if (!owners.ok()) {
      checks.push_back({"replicas_converge", false, std::string(owners.status().message())});
      return;
    }
    const auto& kv = first_kv->kv();
    const ReplicaCheck converged = CheckReplicasConverge(cluster, *owners, kv.table(), kv.key_count());
    checks.push_back({"replicas_converge", converged.passed, converged.detail});
  }
}

}  // namespace

int RunScenario(const RunScenarioOptions& options) {
  const std::optional<scenario::Scenario> loaded = LoadRunnable(options.scenario_path);
  if (!loaded) return 2;
  const scenario::Scenario& spec = *loaded;
  const LocalCluster::Options shape = ShapeOf(spec, options.nodes);
  fs::remove_all(options.directory);
  auto created = LocalCluster::Create(options.directory, options.node_binary, shape);
  if (!created.ok()) {
    std::cerr << "run-scenario: " << created.status().message() << "\n";
    return 2;
  }
  LocalCluster& cluster = *created;
  auto config = LoadConfig(options.directory + "/node1/node.textproto");
  if (!config.ok()) {
    std::cerr << "run-scenario: " << config.status().message() << "\n";
    return 2;
  }
  const TokenRing& ring = *config->node.ring;
  std::cout << "run-scenario " << spec.name() << " seed=" << options.seed << ": " << shape.nodes
            << " nodes, " << shape.shards << " shards, RF " << shape.replication_factor << " in "
            << options.directory << std::endl;
  if (absl::Status started = cluster.StartAll(); !started.ok()) {
    std::cerr << "run-scenario: " << started.message() << "\n";
    (void)cluster.StopAll();
    return 1;
  }

  Random random(options.seed);
  HistoryRecorder history;
  RealFaults faults(spec, cluster, random.Fork(1));
  const auto started = std::chrono::steady_clock::now();
  faults.Start();
  const Workloads workloads = RunWorkloads(spec, options, cluster, ring, history, random, started);
  faults.FinishAndHeal();
  // Operations added nodes to the directory: see them, to check and stop them.
  if (auto reopened = LocalCluster::Open(options.directory, options.node_binary); reopened.ok()) {
    cluster = *std::move(reopened);
  }
  std::vector<Check> checks = WorkloadChecks(workloads);
  std::cout << "  faults: " << faults.applied() << " applied (" << faults.Summary() << ")\n";
  const std::string history_path = options.directory + "/history.jsonl";
  {
    std::ofstream out(history_path);
    history.WriteJson(out);
  }
  ClusterChecks(spec, options, cluster, ring, history_path, checks);
  (void)cluster.StopAll();
  bool passed = true;
  for (const Check& check : checks) {
    std::cout << "  check " << check.name << ": " << (check.passed ? "passed" : "FAILED") << " ("
              << check.detail << ")\n";
    passed = passed && check.passed;
  }
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::steady_clock::now() - started).count();
  std::cout << "run-scenario " << spec.name() << ": " << (passed ? "PASS" : "FAIL") << " in " << seconds
            << " s; history " << history.size() << " events"
            << (options.keep ? absl::StrCat(" in ", history_path) : "") << "\n";
  if (!options.keep) fs::remove_all(options.directory);
  return passed ? 0 : 1;
}

}  // namespace charybdis::node
