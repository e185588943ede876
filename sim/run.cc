#include "sim/run.h"

#include <memory>

#include "sim/cluster.h"
#include "sim/fault_injector.h"
#include "sim/ping_workload.h"
#include "sim/view_check.h"

namespace charybdis::sim {

namespace {

std::vector<std::unique_ptr<Workload>> MakeWorkloads(Simulator& simulator, Cluster& cluster,
                                                     const scenario::Scenario& spec,
                                                     const Random& random) {
  std::vector<std::unique_ptr<Workload>> workloads;
  for (int i = 0; i < spec.workload_size(); i++) {
    const auto& workload = spec.workload(i);
    const Random stream = random.Fork(1000 + static_cast<uint64_t>(i));
    switch (workload.kind_case()) {
      case scenario::Workload::kPing:
        workloads.push_back(std::make_unique<PingWorkload>(simulator, cluster, workload.name(),
                                                           workload.ping(), stream));
        break;
      case scenario::Workload::KIND_NOT_SET:
        break;  // rejected by the validator
    }
  }
  return workloads;
}

bool AllDone(const std::vector<std::unique_ptr<Workload>>& workloads) {
  for (const auto& workload : workloads) {
    if (!workload->done()) return false;
  }
  return true;
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
  StorageStats storage;
  for (NodeId id = 1; id <= cluster.size(); id++) {
    for (ShardId shard = 0; shard < cluster.topology().shards_per_node; shard++) {
      const StorageStats& s = cluster.node(id).storage(shard).stats();
      storage.writes += s.writes;
      storage.synced_writes += s.synced_writes;
      storage.reads += s.reads;
      storage.failed += s.failed;
      storage.batches_lost_in_crashes += s.batches_lost_in_crashes;
    }
  }
  details["storage"] = {{"writes", storage.writes},
                        {"synced_writes", storage.synced_writes},
                        {"reads", storage.reads},
                        {"failed", storage.failed},
                        {"batches_lost_in_crashes", storage.batches_lost_in_crashes}};
  nlohmann::json sites = nlohmann::json::object();
  for (const auto& [site, state] : buggify.sites()) {
    sites[site] = {{"enabled", state.enabled}, {"fired", state.fired}};
  }
  details["buggify"] = sites;
  return details;
}

}  // namespace

RunResult RunScenario(const LoadedScenario& scenario, uint64_t seed, std::FILE* trace) {
  const scenario::Scenario& spec = scenario.spec;
  const Random root(seed);
  Simulator simulator;
  simulator.set_trace_file(trace);
  SimBuggify buggify(spec.buggify(), root.Fork(1));
  Cluster cluster(simulator, scenario, root.Fork(2), buggify);
  FaultInjector faults(simulator, cluster, spec, root.Fork(3));
  auto workloads = MakeWorkloads(simulator, cluster, spec, root.Fork(4));

  cluster.StartAll();
  faults.Schedule();
  for (auto& workload : workloads) workload->Start();

  const Nanos time_limit = static_cast<Nanos>(spec.time_limit_ms()) * kMillisecond;
  const Nanos settled_at =
      faults.quiet_from() + static_cast<Nanos>(spec.checks().settle_ms()) * kMillisecond;
  while (!simulator.empty()) {
    const Nanos next = simulator.next_time();
    if (next > time_limit) break;
    if (next > settled_at && AllDone(workloads)) break;
    simulator.Step();
  }

  RunResult result;
  result.scenario = spec.name().empty() ? scenario.path : spec.name();
  result.seed = seed;
  result.trace_hash = simulator.trace_hash();
  result.events = simulator.events_processed();
  result.simulated = simulator.now();
  if (spec.checks().views_converge()) result.checks.push_back(CheckViewsConverge(cluster));
  for (const auto& workload : workloads) {
    result.workloads.push_back(workload->Results());
    for (CheckResult& check : workload->Checks()) result.checks.push_back(std::move(check));
  }
  result.details = Details(cluster, faults, buggify);
  for (const CheckResult& check : result.checks) {
    if (!check.passed) result.outcome = Outcome::kCheckFailed;
  }
  if (result.outcome == Outcome::kPassed && !AllDone(workloads)) {
    result.outcome = Outcome::kLiveness;
  }
  return result;
}

}  // namespace charybdis::sim
