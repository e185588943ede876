// Runs the sim binary as a user would: flags, exit codes, output, reports.

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "nlohmann/json.hpp"
#include "tests/command_run.h"
#include "tests/scenario_text.h"

namespace charybdis {
namespace {

using CliRun = testing::CommandRun;

CliRun Sim(const std::string& flags) { return testing::RunCommand("sim/charybdis_sim " + flags); }

std::string TempFile(const std::string& name, const std::string& contents) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::ofstream(path) << contents;
  return path;
}

std::string HashIn(const std::string& output) {
  std::smatch match;
  EXPECT_TRUE(std::regex_search(output, match, std::regex("trace_hash=([0-9a-f]{16})\\b")))
      << output;
  return match.size() > 1 ? match[1].str() : "";
}

constexpr char kSmoke[] = "--scenario=scenarios/smoke.textproto";

TEST(CliTest, SameSeedPrintsSameHashAndOtherSeedAnother) {
  const CliRun first = Sim(std::string(kSmoke) + " --seed=1");
  const CliRun again = Sim(std::string(kSmoke) + " --seed=1");
  const CliRun other = Sim(std::string(kSmoke) + " --seed=2");
  EXPECT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(HashIn(first.output), HashIn(again.output));
  EXPECT_NE(HashIn(first.output), HashIn(other.output));
  EXPECT_NE(first.output.find("check views_converge: passed"), std::string::npos);
}

TEST(CliTest, NoFlagsRunsEveryScenarioAtSeedOne) {
  const CliRun run = Sim("");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("smoke seed=1 trace_hash="), std::string::npos) << run.output;
}

TEST(CliTest, SweepWithDeterminismCheck) {
  const CliRun run = Sim(std::string(kSmoke) + " --seeds=1-20 --check_determinism");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(std::count(run.output.begin(), run.output.end(), '\n') >= 20, true);
  EXPECT_NE(run.output.find("all 20 runs passed"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("[20/20] 0 failed"), std::string::npos) << run.output;
}

TEST(CliTest, BadScenarioExitsTwoNamingLineAndField) {
  std::string text = sim::testing::BaseScenario();
  text.replace(text.find("replication_factor: 3"), 21, "replication_factor: 5");
  const CliRun run = Sim("--scenario=" + TempFile("bad.textproto", text));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.output.find("bad.textproto:12:"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("replication_factor"), std::string::npos) << run.output;
}

TEST(CliTest, UsageErrorsExitTwo) {
  EXPECT_EQ(Sim("--bogus").exit_code, 2);
  EXPECT_EQ(Sim("--seeds=5-1").exit_code, 2);
  EXPECT_EQ(Sim("--seed=x").exit_code, 2);
  EXPECT_EQ(Sim("--scenario=/nonexistent.textproto").exit_code, 2);
  const CliRun help = Sim("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.output.find("--check_determinism"), std::string::npos);
}

TEST(CliTest, CheckFailureExitsOneAndLivenessExitsThree) {
  const std::string failing = TempFile(
      "failing.textproto",
      sim::testing::BaseScenario("faults { action { at_ms: 19900 crash { node: 2 } } }\n"
                                 "checks { views_converge: true }\n"));
  const CliRun failed = Sim("--scenario=" + failing + " --seeds=3-4");
  EXPECT_EQ(failed.exit_code, 1) << failed.output;
  EXPECT_NE(failed.output.find("replay: ./charybdis sim --scenario=" + failing + " --seed=4"),
            std::string::npos)
      << failed.output;

  const std::string slow = TempFile(
      "slow.textproto",
      sim::testing::BaseScenario("workload { name: \"w\" ping { clients: 1 requests_per_client: "
                                 "1000 timeout_ms: 100 think_time_ms: 100 } }"));
  EXPECT_EQ(Sim("--scenario=" + slow).exit_code, 3);
}

TEST(CliTest, ReportAndTrace) {
  const std::string report = std::string(std::getenv("TEST_TMPDIR")) + "/report.json";
  const std::string trace = std::string(std::getenv("TEST_TMPDIR")) + "/trace.txt";
  const CliRun run = Sim(std::string(kSmoke) + " --seed=5 --report=" + report + " --trace_out=" + trace);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  nlohmann::json json = nlohmann::json::parse(std::ifstream(report));
  for (const char* key : {"scenario", "seed", "trace_hash", "events", "simulated_ms", "wall_ms",
                          "checks", "workloads"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
  EXPECT_EQ(json["seed"], 5);
  EXPECT_EQ(json["trace_hash"], HashIn(run.output));
  EXPECT_TRUE(json["checks"][0]["passed"].get<bool>());
  EXPECT_EQ(json["workloads"][0]["name"], "echo");

  std::ifstream lines(trace);
  std::string line;
  uint64_t count = 0;
  while (std::getline(lines, line)) count += line[0] != '#';
  EXPECT_EQ(count, json["events"].get<uint64_t>());
}

TEST(CliTest, ARecordedHistoryIsCheckedAndATamperedOneFails) {
  const std::string history = std::string(std::getenv("TEST_TMPDIR")) + "/history.jsonl";
  const std::string scenario = "--scenario=scenarios/lwt_faults.textproto";
  ASSERT_EQ(Sim(scenario + " --seed=3 --history_out=" + history).exit_code, 0);
  const CliRun checked = Sim(scenario + " --check_history=" + history);
  EXPECT_EQ(checked.exit_code, 0) << checked.output;
  EXPECT_NE(checked.output.find("check linearizable: passed"), std::string::npos) << checked.output;
  // The first value a read returned becomes one nobody wrote.
  std::ifstream in(history);
  std::string line;
  std::string tampered;
  bool changed = false;
  while (std::getline(in, line)) {
    nlohmann::json op = nlohmann::json::parse(line);
    if (!changed && op["type"] == "ok" && op["f"] == "read" && !op["value"].is_null()) {
      op["value"] = "never-written";
      changed = true;
    }
    tampered += op.dump() + "\n";
  }
  ASSERT_TRUE(changed);
  const CliRun failed = Sim(scenario + " --check_history=" + TempFile("tampered.jsonl", tampered));
  EXPECT_EQ(failed.exit_code, 1) << failed.output;
  EXPECT_NE(failed.output.find("admit no linearization"), std::string::npos) << failed.output;
  EXPECT_EQ(Sim(scenario + " --check_history=" + TempFile("garbage.jsonl", "{\"process\": 1}\n")).exit_code, 2);
}

TEST(CliTest, JepsenStyleHistoriesAreCheckedForLinearizability) {
  for (const char* name : {"register_linearizable", "cas_linearizable"}) {
    const CliRun run = Sim(std::string("--check_history=tests/histories/") + name + ".jsonl");
    EXPECT_EQ(run.exit_code, 0) << name << ": " << run.output;
    EXPECT_NE(run.output.find("check linearizable: passed"), std::string::npos) << run.output;
  }
  for (const char* name : {"stale_read", "double_cas"}) {
    const CliRun run = Sim(std::string("--check_history=tests/histories/") + name + ".jsonl");
    EXPECT_EQ(run.exit_code, 1) << name << ": " << run.output;
    EXPECT_NE(run.output.find("check linearizable: FAILED"), std::string::npos) << run.output;
  }
}

TEST(CliTest, AHistoryWithNothingToCheckFailsAndSaysSo) {
  // Only plain (QUORUM) operations: nothing for the linearizability check.
  const std::string plain = TempFile(
      "plain.jsonl",
      "{\"process\": 0, \"type\": \"invoke\", \"f\": \"write\", \"key\": \"k\", \"value\": \"a\", "
      "\"consistency\": \"QUORUM\"}\n"
      "{\"process\": 0, \"type\": \"ok\", \"f\": \"write\", \"key\": \"k\", \"value\": \"a\", "
      "\"consistency\": \"QUORUM\", \"timestamp\": 5}\n");
  const CliRun run = Sim("--check_history=" + plain);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("nothing to check"), std::string::npos) << run.output;
}

TEST(CliTest, MalformedHistoriesAreBadInputNamingTheLine) {
  const CliRun twice = Sim("--check_history=" +
                           TempFile("twice.jsonl",
                                    "{\"process\": 0, \"type\": \"invoke\", \"f\": \"read\"}\n"
                                    "{\"process\": 0, \"type\": \"invoke\", \"f\": \"read\"}\n"));
  EXPECT_EQ(twice.exit_code, 2) << twice.output;
  EXPECT_NE(twice.output.find("history line 2: process 0 invokes again"), std::string::npos)
      << twice.output;
  const CliRun orphan = Sim("--check_history=" +
                            TempFile("orphan.jsonl", "{\"process\": 4, \"type\": \"ok\", \"f\": \"read\"}\n"));
  EXPECT_EQ(orphan.exit_code, 2) << orphan.output;
  EXPECT_NE(orphan.output.find("never invoked"), std::string::npos) << orphan.output;
}

TEST(CliTest, ASweepReportsItsCoverageAndFailsWhenARequiredProbeIsMissed) {
  const CliRun covered = Sim(std::string(kSmoke) + " --seeds=1-3");
  EXPECT_EQ(covered.exit_code, 0) << covered.output;
  EXPECT_NE(covered.output.find("probes reached ("), std::string::npos) << covered.output;
  EXPECT_NE(covered.output.find("failure_detector.convicted="), std::string::npos) << covered.output;
  EXPECT_NE(covered.output.find("probes never reached: "), std::string::npos) << covered.output;
  // A failure detector under no fault never convicts anyone.
  const std::string quiet = TempFile(
      "quiet.textproto",
      sim::testing::BaseScenario("checks { sweep_reaches_probe: \"failure_detector.convicted\" }"));
  const CliRun missed = Sim("--scenario=" + quiet + " --seeds=1-2");
  EXPECT_EQ(missed.exit_code, 1) << missed.output;
  EXPECT_NE(missed.output.find("FAILED: probe failure_detector.convicted"), std::string::npos)
      << missed.output;
}

TEST(CliTest, SlicesOfASweepRunEverySeedOnceAndMergeIntoOneVerdict) {
  const std::string a = TempFile("slice1.json", "");
  const std::string b = TempFile("slice2.json", "");
  const CliRun first = Sim(std::string(kSmoke) + " --seeds=1-5 --shard=1/2 --report=" + a);
  const CliRun second = Sim(std::string(kSmoke) + " --seeds=1-5 --shard=2/2 --report=" + b);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  ASSERT_EQ(second.exit_code, 0) << second.output;
  // Slice 1 holds seeds 1, 3, 5 and slice 2 seeds 2, 4.
  EXPECT_NE(first.output.find("smoke seed=5 "), std::string::npos) << first.output;
  EXPECT_EQ(first.output.find("smoke seed=2 "), std::string::npos) << first.output;
  EXPECT_NE(second.output.find("smoke seed=4 "), std::string::npos) << second.output;
  const std::string merged = TempFile("merged.json", "");
  const CliRun merge = Sim("--merge=" + a + "," + b + " --report=" + merged);
  EXPECT_EQ(merge.exit_code, 0) << merge.output;
  EXPECT_NE(merge.output.find("5 runs from 2 slices: 0 failed"), std::string::npos) << merge.output;
  std::ifstream in(merged);
  EXPECT_EQ(nlohmann::json::parse(in).size(), 5u);
  // The same slice twice is a mistake, not twice the evidence.
  EXPECT_EQ(Sim("--merge=" + a + "," + a).exit_code, 2);
  EXPECT_EQ(Sim(std::string(kSmoke) + " --seeds=1-5 --shard=3/2").exit_code, 2);
  EXPECT_EQ(Sim(std::string(kSmoke) + " --seeds=1-1 --shard=2/2").exit_code, 2);
}

TEST(CliTest, LivenessModeExitsThreeWhenWorkOutlastsTheBoundAfterTheHeal) {
  const std::string workload =
      "schema { table { name: \"kv\" column: \"v\" } }\n"
      "workload { name: \"w\" kv { clients: 2 operations_per_client: 50 table: \"kv\" "
      "key_count: 5 read_fraction: 0.5 write_consistency: CL_QUORUM read_consistency: CL_QUORUM "
      "start_ms: 600 think_time_ms: 5 } }\n"
      "faults { action { at_ms: 700 crash { node: 3 } } action { at_ms: 800 restart { node: 3 } } }\n";
  const std::string loose = TempFile(
      "loose.textproto", sim::testing::BaseScenario(workload + "checks { finish_after_heal_ms: 5000 }"));
  EXPECT_EQ(Sim("--scenario=" + loose + " --seed=1").exit_code, 0);
  // QUORUM operations on this network take about a millisecond: some
  // take longer than a 1 ms bound (the run is deterministic: seed 1).
  const std::string tight = TempFile(
      "tight.textproto", sim::testing::BaseScenario(workload + "checks { finish_after_heal_ms: 0 }"));
  const std::string tighter = TempFile(
      "tighter.textproto",
      sim::testing::BaseScenario(workload + "checks { finish_after_heal_ms: 1 }"));
  EXPECT_EQ(Sim("--scenario=" + tight + " --seed=1").exit_code, 0);  // 0: off
  const CliRun run = Sim("--scenario=" + tighter + " --seed=1");
  EXPECT_EQ(run.exit_code, 3) << run.output;
  EXPECT_NE(run.output.find("finish_after_heal: FAILED"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace charybdis
