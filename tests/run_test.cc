#include "sim/run.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "sim/scenario_loader.h"
#include "tests/scenario_text.h"

namespace charybdis::sim {
namespace {

using testing::BaseScenario;
using testing::MustParse;

const char kFaultyWorkload[] = R"(
workload { name: "echo" ping { clients: 3 requests_per_client: 100 timeout_ms: 200 think_time_ms: 20 payload_bytes: 8 } }
faults { action { at_ms: 1000 crash { node: 2 } } action { at_ms: 3000 restart { node: 2 } } }
random_faults {
  start_ms: 4000 end_ms: 12000
  max_crashes_per_minute: 20 max_downtime_ms: 2000
  max_partitions_per_minute: 20 max_partition_ms: 2000
  max_loss: 0.1 max_duplicate: 0.1 max_reorder: 0.2
  max_clock_skews_per_minute: 10 max_clock_skew_ms: 500
}
checks { views_converge: true settle_ms: 4000 }
buggify: true
)";

TEST(RunTest, SameSeedSameRunOtherSeedOtherRun) {
  const LoadedScenario scenario = MustParse(BaseScenario(kFaultyWorkload));
  const RunResult first = RunScenario(scenario, 7, nullptr);
  const RunResult second = RunScenario(scenario, 7, nullptr);
  const RunResult other = RunScenario(scenario, 8, nullptr);
  EXPECT_EQ(first.outcome, Outcome::kPassed) << first.checks.front().detail;
  EXPECT_EQ(first.trace_hash, second.trace_hash);
  EXPECT_EQ(first.events, second.events);
  EXPECT_EQ(first.workloads, second.workloads);
  EXPECT_NE(first.trace_hash, other.trace_hash);
  EXPECT_EQ(TraceOfRun(scenario, 7), TraceOfRun(scenario, 7));
}

TEST(RunTest, ManySeedsPassUnderRandomFaults) {
  const LoadedScenario scenario = MustParse(BaseScenario(kFaultyWorkload));
  int faults_applied = 0;
  for (uint64_t seed = 1; seed <= 40; seed++) {
    const RunResult result = RunScenario(scenario, seed, nullptr);
    ASSERT_EQ(result.outcome, Outcome::kPassed) << "seed " << seed << ": " << result.details.dump();
    faults_applied += static_cast<int>(result.details["faults"].size());
    EXPECT_EQ(result.workloads[0]["requests"], 300);
  }
  EXPECT_GT(faults_applied, 40 * 2);  // random faults happened, not just the script
}

// The scenario's one check, by name.
const CheckResult& CheckNamed(const RunResult& result, const std::string& name) {
  for (const CheckResult& check : result.checks) {
    if (check.name == name) return check;
  }
  ADD_FAILURE() << "no check " << name;
  return result.checks.front();
}

TEST(RunTest, PeriodicPowerLossLosesAcknowledgedWritesOnlyInPeriodicMode) {
  absl::StatusOr<LoadedScenario> periodic = LoadScenario("scenarios/periodic_power_loss.textproto");
  ASSERT_TRUE(periodic.ok()) << periodic.status();
  LoadedScenario group = *periodic;
  group.spec.mutable_storage()->clear_commitlog_sync();
  group.spec.mutable_checks()->clear_expect_failing();
  for (uint64_t seed = 1; seed <= 5; seed++) {
    const RunResult lost = RunScenario(*periodic, seed, nullptr);
    EXPECT_EQ(lost.outcome, Outcome::kPassed) << "seed " << seed;
    const CheckResult& expected = CheckNamed(lost, "acknowledged_writes_kept");
    EXPECT_NE(expected.detail.find("failed as expected"), std::string::npos) << expected.detail;
    EXPECT_NE(expected.detail.find("acknowledged writes lost"), std::string::npos) << expected.detail;

    const RunResult kept = RunScenario(group, seed, nullptr);
    EXPECT_EQ(kept.outcome, Outcome::kPassed) << "seed " << seed;
    EXPECT_TRUE(CheckNamed(kept, "acknowledged_writes_kept").passed)
        << CheckNamed(kept, "acknowledged_writes_kept").detail;
  }
}

TEST(RunTest, AnExpectedFailureThatPassesFailsTheRun) {
  const LoadedScenario scenario = MustParse(BaseScenario(
      "workload { name: \"echo\" ping { clients: 1 requests_per_client: 10 timeout_ms: 200 } }\n"
      "checks { views_converge: true expect_failing: \"views_converge\" expect_failing: \"nope\" }"));
  const RunResult result = RunScenario(scenario, 1, nullptr);
  EXPECT_EQ(result.outcome, Outcome::kCheckFailed);
  EXPECT_FALSE(CheckNamed(result, "views_converge").passed);
  EXPECT_NE(CheckNamed(result, "views_converge").detail.find("expected to fail"), std::string::npos);
  EXPECT_FALSE(CheckNamed(result, "expect_failing.nope").passed);
}

TEST(RunTest, UnfinishedWorkIsALivenessFailure) {
  const LoadedScenario scenario = MustParse(BaseScenario(
      "workload { name: \"slow\" ping { clients: 1 requests_per_client: 1000 timeout_ms: 100 "
      "think_time_ms: 100 } }"));
  const RunResult result = RunScenario(scenario, 1, nullptr);
  EXPECT_EQ(result.outcome, Outcome::kLiveness);
  EXPECT_LE(result.simulated, 20 * kSecond);
  EXPECT_GT(result.simulated, 19 * kSecond);
  EXPECT_FALSE(result.workloads[0]["done"].get<bool>());
}

TEST(RunTest, ViewsThatHaveNotConvergedFailTheCheck) {
  // Node 2 crashes 100 ms before the end: nobody has convicted it yet.
  std::string text = BaseScenario(
      "faults { action { at_ms: 19900 crash { node: 2 } } }\n"
      "checks { views_converge: true }\n");
  const RunResult result = RunScenario(MustParse(text), 1, nullptr);
  EXPECT_EQ(result.outcome, Outcome::kCheckFailed);
  ASSERT_EQ(result.checks.size(), 1u);
  EXPECT_EQ(result.checks[0].name, "views_converge");
  EXPECT_NE(result.checks[0].detail.find("node 1 sees [1,2,3] up"), std::string::npos)
      << result.checks[0].detail;
}

// The crash-point sweep's scenario must give it a point in each subsystem
// that syncs state (docs/scenarios.md, "Every crash point"): its node 1
// syncs acceptor state and its horizon and fences, hints, batch log
// entries, the schema log and data.
TEST(RunTest, TheCrashPointScenarioSyncsEverySubsystemsState) {
  absl::StatusOr<LoadedScenario> scenario = LoadScenario("scenarios/crash_points.textproto");
  ASSERT_TRUE(scenario.ok()) << scenario.status();
  const RunResult result = RunScenario(*scenario, 1, nullptr);
  ASSERT_EQ(result.outcome, Outcome::kPassed);
  const nlohmann::json& node_1 = result.details["synced_writes_by_kind"]["1"];
  for (const char* kind : {"paxos state", "paxos horizon and fences", "hints", "batch log", "schema log", "data"}) {
    EXPECT_GT(node_1.value(kind, uint64_t{0}), 0u) << kind << " in " << node_1.dump();
  }
}

TEST(RunTest, EndsOnceWorkIsDoneAndFaultsHaveSettled) {
  const LoadedScenario scenario = MustParse(BaseScenario(
      "workload { name: \"quick\" ping { clients: 2 requests_per_client: 10 timeout_ms: 100 } }\n"
      "faults { action { at_ms: 500 clog { node: 1 duration_ms: 500 } } }\n"
      "checks { views_converge: true settle_ms: 2000 }\n"));
  const RunResult result = RunScenario(scenario, 3, nullptr);
  EXPECT_EQ(result.outcome, Outcome::kPassed);
  EXPECT_LE(result.simulated, 3 * kSecond);
  EXPECT_GE(result.simulated, 2900 * kMillisecond);
}

// 4 clients on one core whose every request costs `request_us` of it.
LoadedScenario OnASlowClientMachine(uint64_t request_us, uint64_t timeout_ms) {
  return MustParse(BaseScenario(absl::StrCat(
      "schema { table { name: \"kv\" column: \"v\" } }\n"
      "workload { name: \"w\" kv { clients: 4 operations_per_client: 10 table: \"kv\" "
      "write_consistency: CL_QUORUM shard_aware: true timeout_ms: ", timeout_ms, " } }\n",
      request_us == 0 ? "" : absl::StrCat("client_machine { request { min_us: ", request_us,
                                          " jitter_mean_us: 0 } cores: 1 }\n"))));
}

TEST(RunTest, AClientMachineSendsOneRequestPerCoreAtATimeAndNotPastItsTimeout) {
  auto p50_us = [](const RunResult& result) {
    return result.workloads.at(0).at("by_cl").at("QUORUM").at("write").at("p50_us").get<int64_t>();
  };
  // Writes the coordinators saw through, over every shard.
  auto coordinated = [](const RunResult& result) {
    uint64_t writes = 0;
    for (const auto& [node, shards] : result.details.at("metrics").at("nodes").items()) {
      for (const auto& shard : shards) writes += shard.at("write_latency_us").at("count").get<uint64_t>();
    }
    return writes;
  };
  const RunResult free = RunScenario(OnASlowClientMachine(0, 10000), 1, nullptr);
  ASSERT_EQ(free.outcome, Outcome::kPassed);
  EXPECT_LT(p50_us(free), 5000);
  // Four clients queue for the one core: each request waits for the ones
  // ahead of it, about 4 x 5 ms.
  const RunResult busy = RunScenario(OnASlowClientMachine(5000, 10000), 1, nullptr);
  ASSERT_EQ(busy.outcome, Outcome::kPassed);
  EXPECT_GE(p50_us(busy), 15000);
  EXPECT_NE(busy.trace_hash, free.trace_hash);
  // Each request would leave after its client gave up: none is answered.
  const RunResult timed_out = RunScenario(OnASlowClientMachine(300000, 100), 1, nullptr);
  EXPECT_EQ(timed_out.workloads.at(0).at("ok").get<uint64_t>(), 0u);
  // ...and none reached a coordinator, as a real client sends nothing past
  // its deadline.
  EXPECT_EQ(coordinated(timed_out), 0u);
  EXPECT_EQ(coordinated(busy), 40u);  // the count's own control
}

}  // namespace
}  // namespace charybdis::sim
