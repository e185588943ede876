// Reads the sources of core/, sim/ and node/ and enforces the layering and
// determinism rules (docs/determinism.md), in the spirit of TigerBeetle's
// tidy.zig.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace charybdis {
namespace {

namespace fs = std::filesystem;

struct Source {
  std::string path;
  std::string text;
};

std::vector<Source> SourcesUnder(const std::string& directory) {
  std::vector<Source> sources;
  for (const auto& entry : fs::recursive_directory_iterator(directory)) {
    const std::string extension = entry.path().extension().string();
    if (extension != ".h" && extension != ".cc") continue;
    std::stringstream text;
    text << std::ifstream(entry.path()).rdbuf();
    sources.push_back(Source{entry.path().string(), text.str()});
  }
  EXPECT_FALSE(sources.empty()) << directory;
  return sources;
}

std::vector<std::string> Violations(const std::vector<Source>& sources, const std::regex& banned,
                                    const std::vector<std::string>& exempt = {}) {
  std::vector<std::string> found;
  for (const Source& source : sources) {
    if (std::find(exempt.begin(), exempt.end(), source.path) != exempt.end()) continue;
    std::istringstream lines(source.text);
    std::string line;
    for (int number = 1; std::getline(lines, line); number++) {
      if (std::regex_search(line, banned)) found.push_back(source.path + ":" + std::to_string(number) + ": " + line);
    }
  }
  return found;
}

// Nondeterminism that must never reach a simulation.
const std::regex kBannedApis(
    R"(std::chrono::(system_clock|steady_clock|high_resolution_clock)|\bgettimeofday\b|)"
    R"(\bclock_gettime\b|\btime\(|std::random_device|\brand\(\)|\bsrand\(|)"
    R"(std::[a-z_]+_distribution|absl::BitGen|absl::Now\(|absl/random/|)"
    R"(std::thread|std::async|pthread_create|<thread>|std::mt19937)");

TEST(LayeringTest, CoreIncludesNeitherSimNorNode) {
  const auto found = Violations(SourcesUnder("core"), std::regex(R"(#include\s+"(sim|node)/)"));
  EXPECT_TRUE(found.empty()) << found.front();
}

TEST(LayeringTest, CoreLinksNoGrpcOrRocksdb) {
  const auto found =
      Violations(SourcesUnder("core"), std::regex(R"(#include\s+[<"](grpc|grpcpp|rocksdb)/)"));
  EXPECT_TRUE(found.empty()) << found.front();
}

TEST(LayeringTest, SimDoesNotIncludeNode) {
  const auto found = Violations(SourcesUnder("sim"), std::regex(R"(#include\s+"node/)"));
  EXPECT_TRUE(found.empty()) << found.front();
}

TEST(LayeringTest, NodeDoesNotIncludeSim) {
  const auto found = Violations(SourcesUnder("node"), std::regex(R"(#include\s+"sim/)"));
  EXPECT_TRUE(found.empty()) << found.front();
}

TEST(LayeringTest, NoNondeterministicApisInCoreOrSim) {
  auto found = Violations(SourcesUnder("core"), kBannedApis);
  // The runner (main, sweep) and the benchmark time themselves and fork
  // workers; nothing they run reads the clock.
  const auto in_sim =
      Violations(SourcesUnder("sim"), kBannedApis,
                 {"sim/main.cc", "sim/sweep.cc", "sim/kernel_benchmark.cc"});
  found.insert(found.end(), in_sim.begin(), in_sim.end());
  EXPECT_TRUE(found.empty()) << found.size() << " violations, first: " << found.front();
}

TEST(LayeringTest, NoHashContainersInCoreOrSim) {
  // Abseil seeds its hash per process and std:: hash order is unspecified:
  // ordered containers only, so iteration order never depends on the run.
  auto found = Violations(SourcesUnder("core"), std::regex(R"(unordered_(map|set)|flat_hash_|node_hash_)"));
  const auto in_sim = Violations(SourcesUnder("sim"), std::regex(R"(unordered_(map|set)|flat_hash_|node_hash_)"));
  found.insert(found.end(), in_sim.begin(), in_sim.end());
  EXPECT_TRUE(found.empty()) << found.front();
}

TEST(LayeringTest, TheRulesCatchWhatTheyBan) {
  const std::vector<Source> bad = {
      {"x.cc", "auto t = std::chrono::steady_clock::now();"},
      {"y.cc", "std::uniform_int_distribution<int> d(1, 6);"},
      {"z.cc", "absl::BitGen gen;"},
      {"w.cc", "int r = rand();"}};
  EXPECT_EQ(Violations(bad, kBannedApis).size(), 4u);
  EXPECT_TRUE(Violations({{"ok.cc", "uint64_t Random::Below(uint64_t bound);"}}, kBannedApis).empty());
}

}  // namespace
}  // namespace charybdis
