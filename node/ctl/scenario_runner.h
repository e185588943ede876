#pragma once

#include <cstdint>
#include <string>

namespace charybdis::node {

struct RunScenarioOptions {
  std::string scenario_path;
  // Where the cluster lives; deleted at the end unless `keep`.
  std::string directory;
  bool keep = false;
  std::string node_binary;
  // The simulator binary, whose --check_history runs the history checks.
  std::string checker_binary;
  // Draws the random faults and the clients' choices.
  uint64_t seed = 1;
  // Nodes of the cluster (0: the scenario's own count).
  uint32_t nodes = 0;
};

// `ctl run-scenario`: a scenario's kv workloads and fault schedule against
// a fresh local cluster of real nodes, then its checks (linearizable and
// read_your_writes on the recorded history, views_converge through the
// nodes, replicas_converge on the stopped nodes' RocksDB). Not
// deterministic: the same questions asked of the real thing. Returns the
// exit status: 0 passed, 1 a check failed, 2 a scenario this cannot run.
int RunScenario(const RunScenarioOptions& options);

}  // namespace charybdis::node
