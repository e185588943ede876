#pragma once

#include <string>

#include "gtest/gtest.h"
#include "sim/scenario_loader.h"

namespace charybdis::sim::testing {

// A small valid scenario; tests append fields to it. Three nodes in one
// datacenter (one per rack), two shards each.
inline std::string BaseScenario(const std::string& extra = "") {
  return R"(
name: "test"
time_limit_ms: 20000
topology {
  shards_per_node: 2
  datacenter {
    name: "dc1"
    rack { name: "r1" nodes: 1 }
    rack { name: "r2" nodes: 1 }
    rack { name: "r3" nodes: 1 }
  }
  replication { datacenter { name: "dc1" replication_factor: 3 } }
}
network {
  intra_dc { min_us: 200 jitter_mean_us: 100 }
  intra_node { min_us: 5 }
}
storage { write { min_us: 20 } sync { min_us: 200 } read { min_us: 20 } }
failure_detector { heartbeat_interval_ms: 100 convict_after_ms: 500 }
)" + extra;
}

inline LoadedScenario MustParse(const std::string& text) {
  absl::StatusOr<LoadedScenario> loaded = ParseScenario("test.textproto", text);
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  return loaded.ok() ? *loaded : LoadedScenario{};
}

}  // namespace charybdis::sim::testing
