// Reads the sources of core/, sim/ and node/ and enforces the layering and
// determinism rules (docs/determinism.md), in the spirit of TigerBeetle's
// tidy.zig.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <regex>
#include <set>
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

// The folder of core/ that holds `path` ("." for the root), or "" when the
// path is not under core/.
std::string CoreFolder(const std::string& path) {
  if (path.rfind("core/", 0) != 0) return "";
  const std::string rest = path.substr(5);
  const size_t slash = rest.find('/');
  return slash == std::string::npos ? "." : rest.substr(0, slash);
}

// Folder -> the folders its files include, from `#include "core/..."`.
std::map<std::string, std::set<std::string>> FolderIncludes(const std::vector<Source>& sources) {
  const std::regex include(R"re(#include\s+"(core/[^"]+)")re");
  std::map<std::string, std::set<std::string>> edges;
  for (const Source& source : sources) {
    const std::string from = CoreFolder(source.path);
    for (std::sregex_iterator it(source.text.begin(), source.text.end(), include), end; it != end; ++it) {
      const std::string to = CoreFolder((*it)[1].str());
      if (!from.empty() && to != from) edges[from].insert(to);
    }
  }
  return edges;
}

// One cycle of the folder graph, as "a -> b -> a", or "" when there is none.
std::string FolderCycle(const std::map<std::string, std::set<std::string>>& edges) {
  std::map<std::string, int> state;  // 1: on the current path, 2: done
  std::vector<std::string> path;
  std::string cycle;
  std::function<bool(const std::string&)> visit = [&](const std::string& folder) {
    state[folder] = 1;
    path.push_back(folder);
    auto it = edges.find(folder);
    for (const std::string& next : it == edges.end() ? std::set<std::string>() : it->second) {
      if (state[next] == 1) {
        for (auto at = std::find(path.begin(), path.end(), next); at != path.end(); ++at) cycle += *at + " -> ";
        cycle += next;
        return true;
      }
      if (state[next] == 0 && visit(next)) return true;
    }
    path.pop_back();
    state[folder] = 2;
    return false;
  };
  for (const auto& [folder, targets] : edges) {
    if (state[folder] == 0 && visit(folder)) return cycle;
  }
  return "";
}

TEST(LayeringTest, CoreFoldersIncludeEachOtherWithoutCycles) {
  // Folder by folder, core/ is a stack: the seams (env/) at the bottom,
  // the shard (the root) on top. A cycle would tie two folders into one
  // that can be neither read nor tested alone (docs/architecture.md).
  const std::string cycle = FolderCycle(FolderIncludes(SourcesUnder("core")));
  EXPECT_EQ(cycle, "") << "core/ folders include each other in a cycle: " << cycle;
}

TEST(LayeringTest, TheCycleRuleCatchesACycle) {
  const std::vector<Source> knot = {
      {"core/paxos/proposer.h", "#include \"core/coordinator/context.h\""},
      {"core/coordinator/coordinator.h", "#include \"core/paxos/proposer.h\""},
      {"core/shard.h", "#include \"core/coordinator/coordinator.h\""}};
  EXPECT_EQ(FolderCycle(FolderIncludes(knot)), "coordinator -> paxos -> coordinator");
  const std::vector<Source> stack = {
      {"core/paxos/proposer.h", "#include \"core/request/context.h\""},
      {"core/coordinator/coordinator.h", "#include \"core/paxos/proposer.h\""},
      {"core/shard.h", "#include \"core/coordinator/coordinator.h\""}};
  EXPECT_EQ(FolderCycle(FolderIncludes(stack)), "");
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
