#pragma once

// One descriptor per kind of scenario fault (scenario.proto's FaultAction
// kinds): how long a scripted one lasts, which random_faults rate draws it,
// and whether real nodes can do it. The scenario validator, the simulator's
// fault injector, the shrinker and node/ctl/real_faults.cc all read these, so a
// new kind of fault is described once.

#include <cstdint>
#include <vector>

#include "proto/scenario.pb.h"

namespace charybdis {

struct FaultKind {
  scenario::FaultAction::KindCase kind;
  // Its field name in FaultAction ("crash", "clock_skew", ...).
  const char* name;
  // Kinds that hold for a while after at_ms: their duration_ms, which must
  // be at least 1 (null for instantaneous kinds).
  uint64_t (*duration_ms)(const scenario::FaultAction& action) = nullptr;
  void (*set_duration_ms)(scenario::FaultAction& action, uint64_t duration_ms) = nullptr;
  // The random_faults fields that draw this kind at random: its rate per
  // minute and its longest duration (null: never drawn at random).
  const char* random_rate_field = nullptr;
  double (*random_rate)(const scenario::RandomFaults& faults) = nullptr;
  const char* random_duration_field = nullptr;
  // Real nodes (charybdis-ctl run-scenario) can do it: kill, start,
  // partition, heal or pause a process. The others are simulation-only.
  bool on_real_nodes = false;
};

// Every kind, in FaultAction's field order.
const std::vector<FaultKind>& FaultKinds();

// The descriptor of one kind (asserts that there is one: KIND_NOT_SET has
// none).
const FaultKind& FaultKindOf(scenario::FaultAction::KindCase kind);

}  // namespace charybdis
