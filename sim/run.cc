#include "sim/run.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "core/request/consistency.h"
#include "sim/cluster.h"
#include "sim/convergence_check.h"
#include "sim/fault_injector.h"
#include "sim/history_check.h"
#include "core/workload/history_json.h"
#include "sim/kv_workload.h"
#include "core/telemetry/percentile.h"
#include "sim/ping_workload.h"
#include "sim/operations_workload.h"
#include "sim/permissions_workload.h"
#include "sim/topology_workload.h"
#include "sim/availability_check.h"
#include "sim/cql_workload.h"
#include "sim/scenario_checks.h"
#include "sim/sim_probes.h"
#include "sim/view_check.h"

namespace charybdis::sim {

namespace {

// The workloads of a run, each started when its `after` is done.
class Workloads {
 public:
  Workloads(Simulator& simulator, Cluster& cluster, const scenario::Scenario& spec,
            const Random& random, History& history, Probes* probes)
      : spec_(spec) {
    for (int i = 0; i < spec.workload_size(); i++) {
      const auto& workload = spec.workload(i);
      const Random stream = random.Fork(1000 + static_cast<uint64_t>(i));
      switch (workload.kind_case()) {
        case scenario::Workload::kPing:
          all_.push_back(std::make_unique<PingWorkload>(simulator, cluster, workload.name(),
                                                        workload.ping(), stream));
          break;
        case scenario::Workload::kKv: {
          auto kv = std::make_unique<KvWorkload>(simulator, cluster, workload.name(), workload.kv(),
                                                 spec.client_machine(), FirstColumn(workload.kv().table()),
                                                 stream, history, next_process_);
          kv_.push_back(kv.get());
          all_.push_back(std::move(kv));
          break;
        }
        case scenario::Workload::kCql:
          all_.push_back(std::make_unique<CqlWorkload>(simulator, cluster, workload.name(), workload.cql(), stream,
                                                       probes));
          break;
        case scenario::Workload::kTopology:
          all_.push_back(std::make_unique<TopologyWorkload>(simulator, cluster, workload.name(), workload.topology(),
                                                            stream));
          break;
        case scenario::Workload::kOperations:
          all_.push_back(
              std::make_unique<OperationsWorkload>(simulator, cluster, workload.name(), workload.operations(), history));
          break;
        case scenario::Workload::kPermissions:
          all_.push_back(std::make_unique<PermissionsWorkload>(simulator, cluster, workload.name(),
                                                               workload.permissions(), stream, probes));
          break;
        case scenario::Workload::KIND_NOT_SET:
          CHARYBDIS_ASSERT(false && "rejected by the validator");
      }
      int after = -1;
      for (int j = 0; j < i; j++) {
        if (spec.workload(j).name() == workload.after()) after = j;
      }
      after_.push_back(after);
      started_.push_back(false);
    }
    unstarted_ = all_.size();
  }

  // Starts every workload whose turn has come.
  void StartReady() {
    if (unstarted_ == 0) return;
    for (size_t i = 0; i < all_.size(); i++) {
      if (started_[i]) continue;
      if (after_[i] >= 0 && !(started_[after_[i]] && all_[after_[i]]->done())) continue;
      started_[i] = true;
      unstarted_--;
      all_[i]->Start();
    }
  }

  bool AllDone() const {
    for (size_t i = 0; i < all_.size(); i++) {
      if (!started_[i] || !all_[i]->done()) return false;
    }
    return true;
  }

  const std::vector<std::unique_ptr<Workload>>& all() const { return all_; }
  const std::vector<KvWorkload*>& kv() const { return kv_; }

 private:
  std::string FirstColumn(const std::string& table) const {
    for (const auto& declared : spec_.schema().table()) {
      if (declared.name() == table) return declared.column(0);
    }
    CHARYBDIS_ASSERT(false && "the validator checks tables");
    return "";
  }

  const scenario::Scenario& spec_;
  uint64_t next_process_ = 0;
  std::vector<std::unique_ptr<Workload>> all_;
  std::vector<KvWorkload*> kv_;
  std::vector<int> after_;
  std::vector<bool> started_;
  size_t unstarted_ = 0;
};

// Latencies per level over every kv workload.
std::map<ConsistencyLevel, KvWorkload::Latencies> MergedLatencies(
    const std::vector<KvWorkload*>& workloads) {
  std::map<ConsistencyLevel, KvWorkload::Latencies> merged;
  for (const KvWorkload* workload : workloads) {
    for (const auto& [level, latencies] : workload->latencies()) {
      auto& into = merged[level];
      into.write_us.insert(into.write_us.end(), latencies.write_us.begin(), latencies.write_us.end());
      into.read_us.insert(into.read_us.end(), latencies.read_us.begin(), latencies.read_us.end());
    }
  }
  return merged;
}

nlohmann::json ByConsistencyLevel(const std::map<ConsistencyLevel, KvWorkload::Latencies>& merged) {
  nlohmann::json by_cl = nlohmann::json::object();
  for (const auto& [level, latencies] : merged) {
    by_cl[ConsistencyName(level)] = {
        {"write", {{"count", latencies.write_us.size()},
                   {"p50_us", Percentile(latencies.write_us, 50)},
                   {"p99_us", Percentile(latencies.write_us, 99)}}},
        {"read", {{"count", latencies.read_us.size()},
                  {"p50_us", Percentile(latencies.read_us, 50)},
                  {"p99_us", Percentile(latencies.read_us, 99)}}}};
  }
  return by_cl;
}

// Counters per shard of every node, and their totals.
nlohmann::json Metrics(const Cluster& cluster) {
  nlohmann::json nodes = nlohmann::json::object();
  for (NodeId id = 1; id <= cluster.size(); id++) {
    nlohmann::json shards = nlohmann::json::array();
    for (ShardId shard = 0; shard < cluster.topology().shards_per_node; shard++) {
      nlohmann::json metrics = cluster.node(id).Counters(shard);
      for (const auto& [name, histogram] : cluster.node(id).Histograms(shard)) {
        metrics[name] = {{"count", histogram.count()},
                         {"p50", histogram.Percentile(50)},
                         {"p99", histogram.Percentile(99)}};
      }
      shards.push_back(metrics);
    }
    nodes[std::to_string(id)] = shards;
  }
  return {{"totals", MetricTotals(cluster)}, {"nodes", nodes}};
}

nlohmann::json Details(const Cluster& cluster, const FaultInjector& faults,
                       const SimBuggify& buggify) {
  nlohmann::json details;
  details["world"] = faults.world().ToString();
  details["faults"] = cluster.fault_log();
  const NetworkStats& network = cluster.network().stats();
  details["network"] = {{"sent", network.sent},
                        {"delivered", network.delivered},
                        {"lost", network.lost},
                        {"duplicated", network.duplicated},
                        {"undeliverable", network.undeliverable}};
  nlohmann::json storage = nlohmann::json::object();
  for (NodeId id = 1; id <= cluster.size(); id++) {
    for (ShardId shard = 0; shard < cluster.topology().shards_per_node; shard++) {
      for (const auto& [name, value] : cluster.node(id).storage(shard).stats().Counters()) {
        storage[name] = storage.value(name, uint64_t{0}) + value;
      }
    }
  }
  details["storage"] = storage;
  nlohmann::json synced_by_kind = nlohmann::json::object();  // by node
  for (NodeId id = 1; id <= cluster.size(); id++) {
    nlohmann::json kinds = nlohmann::json::object();
    for (ShardId shard = 0; shard < cluster.topology().shards_per_node; shard++) {
      for (const auto& [kind, count] : cluster.node(id).storage(shard).synced_writes_by_kind()) {
        kinds[kind] = kinds.value(kind, uint64_t{0}) + count;
      }
    }
    synced_by_kind[std::to_string(id)] = kinds;
  }
  details["synced_writes_by_kind"] = synced_by_kind;
  nlohmann::json sites = nlohmann::json::object();
  for (const auto& [site, state] : buggify.sites()) {
    sites[site] = {{"enabled", state.enabled}, {"fired", state.fired}};
  }
  details["buggify"] = sites;
  return details;
}

// The checks the scenario shows failing on purpose (expect_failing) pass
// when they fail with something checked, and fail when they pass.
void ApplyExpectedFailures(const scenario::Checks& spec, std::vector<CheckResult>& checks) {
  for (const std::string& name : spec.expect_failing()) {
    bool ran = false;
    for (CheckResult& check : checks) {
      if (check.name != name) continue;
      ran = true;
      if (check.nothing_checked) continue;  // that failure shows nothing
      check.detail = absl::StrCat(check.passed ? "expected to fail (expect_failing), but passed: "
                                               : "failed as expected (expect_failing): ",
                                  check.detail);
      check.passed = !check.passed;
    }
    if (!ran) {
      checks.push_back({absl::StrCat("expect_failing.", name), false, "no check of that name ran"});
    }
  }
}

}  // namespace

// The checks a finished run asks for, on the cluster and the history.
// How long after a node is well again the availability check waits.
Nanos AvailabilityRecovery(const scenario::Scenario& spec) {
  const uint64_t recovery_ms = spec.checks().available_when_well().recovery_ms();
  if (recovery_ms > 0) return static_cast<Nanos>(recovery_ms) * kMillisecond;
  const auto& detector = spec.failure_detector();  // defaults filled in by the loader
  return static_cast<Nanos>(detector.convict_after_ms() + 2 * detector.heartbeat_interval_ms() + 1000) * kMillisecond;
}

std::vector<CheckResult> EndOfRunChecks(const scenario::Scenario& spec, const Cluster& cluster,
                                        const History& history, Workloads& workloads, Nanos end) {
  std::vector<CheckResult> checks;
  if (spec.checks().views_converge()) checks.push_back(CheckViewsConverge(cluster));
  // The same history checks as for histories recorded on real nodes.
  for (CheckResult& check : CheckHistory(spec.checks(), *cluster.ring(), history)) {
    checks.push_back(std::move(check));
  }
  if (spec.checks().replicas_converge()) {
    checks.push_back(CheckReplicasConverge(cluster, history));
  }
  if (spec.checks().acknowledged_writes_kept()) {
    checks.push_back(CheckAcknowledgedWritesKept(cluster, history));
  }
  if (spec.checks().no_resurrection()) checks.push_back(CheckNoResurrection(cluster, history));
  const auto latencies = MergedLatencies(workloads.kv());
  for (const auto& check : spec.checks().latency()) {
    checks.push_back(CheckLatency(check, latencies));
  }
  for (const auto& check : spec.checks().workload_latency()) {
    checks.push_back(CheckWorkloadLatency(check, workloads.kv()));
  }
  for (const auto& check : spec.checks().metric()) {
    checks.push_back(CheckMetric(check, cluster, history));
  }
  if (spec.checks().hints_cover_missed_writes_of_node() != 0) {
    checks.push_back(
        CheckHintsCoverMissedWrites(spec.checks().hints_cover_missed_writes_of_node(), cluster, history));
  }
  if (spec.checks().batchlog_drained()) checks.push_back(CheckBatchlogDrained(cluster));
  if (spec.checks().available_when_well().enabled()) {
    checks.push_back(CheckAvailableWhenWell(history, cluster.health(), cluster.ring(), cluster.topology(),
                                            AvailabilityRecovery(spec), end));
  }
  for (const auto& workload : workloads.all()) {
    for (CheckResult& check : workload->Checks()) checks.push_back(std::move(check));
  }
  ApplyExpectedFailures(spec.checks(), checks);
  return checks;
}

RunResult RunScenario(const LoadedScenario& scenario, uint64_t seed, std::FILE* trace,
                      std::ostream* history_out) {
  const scenario::Scenario& spec = scenario.spec;
  const Random root(seed);
  Simulator simulator;
  simulator.set_trace_file(trace);
  SimBuggify buggify(spec.buggify(), root.Fork(1));
  SimProbes probes;
  Cluster cluster(simulator, scenario, root.Fork(2), buggify, &probes);
  FaultInjector faults(simulator, cluster, spec, root.Fork(3));
  History history;
  Workloads workloads(simulator, cluster, spec, root.Fork(4), history, &probes);

  cluster.StartAll();
  faults.Schedule();
  workloads.StartReady();

  // The run ends settle_ms after both the last fault and the last client
  // operation (work they left in flight, like commits and hints, lands).
  const Nanos time_limit = static_cast<Nanos>(spec.time_limit_ms()) * kMillisecond;
  const Nanos settle = static_cast<Nanos>(spec.checks().settle_ms()) * kMillisecond;
  std::optional<Nanos> work_done_at;
  while (!simulator.empty()) {
    const Nanos next = simulator.next_time();
    if (next > time_limit) break;
    if (!work_done_at && workloads.AllDone()) work_done_at = simulator.now();
    if (work_done_at && next > std::max(faults.quiet_from(), *work_done_at) + settle) break;
    simulator.Step();
    workloads.StartReady();
  }

  RunResult result;
  result.scenario = spec.name().empty() ? scenario.path : spec.name();
  result.seed = seed;
  result.trace_hash = simulator.trace_hash();
  result.events = simulator.events_processed();
  result.simulated = simulator.now();
  result.checks = EndOfRunChecks(spec, cluster, history, workloads, simulator.now());
  for (const auto& workload : workloads.all()) result.workloads.push_back(workload->Results());
  if (history_out != nullptr) WriteHistoryJson(history, *history_out);
  result.details = Details(cluster, faults, buggify);
  result.faults_happened = faults.happened();
  result.details["probes"] = probes.hits();
  if (faults.crash_point_moments() > 0) result.details["crash_point_moments"] = faults.crash_point_moments();
  result.details["metrics"] = Metrics(cluster);
  if (!workloads.kv().empty()) {
    result.details["by_cl"] = ByConsistencyLevel(MergedLatencies(workloads.kv()));
  }
  if (spec.checks().finish_after_heal_ms() > 0) {
    result.checks.push_back(CheckFinishAfterHeal(
        history, faults.quiet_from(),
        static_cast<Nanos>(spec.checks().finish_after_heal_ms()) * kMillisecond, simulator.now()));
  }
  bool unfinished = !workloads.AllDone();
  for (const CheckResult& check : result.checks) {
    if (check.passed) continue;
    if (check.liveness) {
      unfinished = true;
    } else {
      result.outcome = Outcome::kCheckFailed;
    }
  }
  if (result.outcome == Outcome::kPassed && unfinished) result.outcome = Outcome::kLiveness;
  return result;
}

std::string TraceOfRun(const LoadedScenario& scenario, uint64_t seed) {
  char* buffer = nullptr;
  size_t size = 0;
  std::FILE* file = open_memstream(&buffer, &size);
  RunScenario(scenario, seed, file);
  std::fclose(file);
  std::string trace(buffer, size);
  std::free(buffer);
  return trace;
}

}  // namespace charybdis::sim
