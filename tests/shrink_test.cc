// --shrink: a failing run reduced to a small scenario that still fails the
// same check at the same seed.

#include "sim/shrink.h"

#include <sstream>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"

#include "sim/run.h"
#include "tests/scenario_text.h"

namespace charybdis::sim {
namespace {

using testing::BaseScenario;
using testing::MustParse;

// Writes at ALL time out whenever random faults take a replica away, and
// the scenario allows no write timeout at all.
std::string TimeoutScenario(double max_partitions_per_minute) {
  return BaseScenario(absl::StrCat(R"(
schema { table { name: "kv" column: "v" } }
workload {
  name: "writes"
  kv {
    clients: 6 operations_per_client: 60 table: "kv" key_count: 20
    read_fraction: 0.3 write_consistency: CL_ALL read_consistency: CL_ONE
    start_ms: 500 think_time_ms: 20 timeout_ms: 3000
  }
}
coordinator { write_timeout_ms: 300 }
random_faults {
  start_ms: 1000 end_ms: 8000
  max_partitions_per_minute: )", max_partitions_per_minute, R"( max_partition_ms: 1000
  max_clogs_per_minute: 30 max_clog_ms: 500
}
checks { settle_ms: 2000 metric { metric: "write_timeouts" at_most: 0 } }
)"));
}

// The first seed at which the scenario fails.
uint64_t FailingSeed(const LoadedScenario& scenario) {
  for (uint64_t seed = 1; seed <= 20; seed++) {
    if (RunScenario(scenario, seed, nullptr).outcome != Outcome::kPassed) return seed;
  }
  ADD_FAILURE() << "no failing seed in 1-20";
  return 0;
}

TEST(ShrinkTest, AFailingRunShrinksToAScenarioThatFailsTheSameCheck) {
  const LoadedScenario scenario = MustParse(TimeoutScenario(60));
  const uint64_t seed = FailingSeed(scenario);
  std::ostringstream log;
  absl::StatusOr<ShrinkResult> shrunk = Shrink(scenario, seed, 300, log);
  ASSERT_TRUE(shrunk.ok()) << shrunk.status();
  EXPECT_EQ(shrunk->failing, std::set<std::string>{"metric.write_timeouts"});
  EXPECT_TRUE(shrunk->faults_scripted) << log.str();
  EXPECT_FALSE(shrunk->spec.has_random_faults());
  EXPECT_LE(shrunk->faults_after, shrunk->faults_before);
  EXPECT_LT(shrunk->events_after * 4, shrunk->events_before) << log.str();
  EXPECT_LE(shrunk->runs, 300u);

  // The written scenario loads, and fails the same check at the seed.
  const std::string text = ShrunkScenarioText(*shrunk, "original.textproto", "shrunk.textproto", seed);
  EXPECT_NE(text.find("# Replay: ./charybdis sim --scenario=shrunk.textproto --seed="), std::string::npos);
  const RunResult again = RunScenario(MustParse(text), seed, nullptr);
  EXPECT_EQ(again.events, shrunk->events_after);
  bool failed_same = false;
  for (const CheckResult& check : again.checks) {
    failed_same = failed_same || (check.name == "metric.write_timeouts" && !check.passed);
  }
  EXPECT_TRUE(failed_same);
}

TEST(ShrinkTest, APassingSeedHasNothingToShrink) {
  const LoadedScenario scenario = MustParse(TimeoutScenario(0));
  std::ostringstream log;
  scenario::Scenario calm = scenario.spec;
  calm.mutable_random_faults()->set_max_clogs_per_minute(0);
  std::string text;
  google::protobuf::TextFormat::PrintToString(calm, &text);
  absl::StatusOr<ShrinkResult> shrunk = Shrink(MustParse(text), 1, 10, log);
  EXPECT_EQ(shrunk.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(shrunk.status().message().find("nothing to shrink"), std::string::npos);
}

TEST(ShrinkTest, TheFaultsThatHappenedReplayAsAScript) {
  const LoadedScenario scenario = MustParse(TimeoutScenario(60));
  const RunResult random = RunScenario(scenario, 3, nullptr);
  ASSERT_GT(random.faults_happened.action_size(), 0);
  scenario::Scenario scripted = scenario.spec;
  scripted.clear_random_faults();
  *scripted.mutable_faults() = random.faults_happened;
  std::string text;
  google::protobuf::TextFormat::PrintToString(scripted, &text);
  const RunResult replayed = RunScenario(MustParse(text), 3, nullptr);
  // The same faults at the same microseconds: the clients see the same run.
  EXPECT_EQ(replayed.workloads.dump(), random.workloads.dump());
}

}  // namespace
}  // namespace charybdis::sim
