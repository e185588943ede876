#include "core/workload/fault_kinds.h"

#include "core/env/assert.h"

namespace charybdis {

namespace {

using Action = scenario::FaultAction;
using Random = scenario::RandomFaults;

std::vector<FaultKind> Describe() {
  std::vector<FaultKind> kinds;
  kinds.push_back({Action::kCrash, "crash"});
  kinds.back().random_rate_field = "max_crashes_per_minute";
  kinds.back().random_rate = [](const Random& f) { return f.max_crashes_per_minute(); };
  kinds.back().random_duration_field = "max_downtime_ms";
  kinds.back().on_real_nodes = true;

  kinds.push_back({Action::kRestart, "restart"});
  kinds.back().on_real_nodes = true;

  kinds.push_back({Action::kPartition, "partition"});
  kinds.back().random_rate_field = "max_partitions_per_minute";
  kinds.back().random_rate = [](const Random& f) { return f.max_partitions_per_minute(); };
  kinds.back().random_duration_field = "max_partition_ms";
  kinds.back().on_real_nodes = true;

  kinds.push_back({Action::kHeal, "heal"});
  kinds.back().on_real_nodes = true;

  kinds.push_back({Action::kClog, "clog"});
  kinds.back().duration_ms = [](const Action& a) { return a.clog().duration_ms(); };
  kinds.back().set_duration_ms = [](Action& a, uint64_t ms) { a.mutable_clog()->set_duration_ms(ms); };
  kinds.back().random_rate_field = "max_clogs_per_minute";
  kinds.back().random_rate = [](const Random& f) { return f.max_clogs_per_minute(); };
  kinds.back().random_duration_field = "max_clog_ms";

  kinds.push_back({Action::kClockSkew, "clock_skew"});
  kinds.back().random_rate_field = "max_clock_skews_per_minute";
  kinds.back().random_rate = [](const Random& f) { return f.max_clock_skews_per_minute(); };
  kinds.back().random_duration_field = "max_clock_skew_ms";

  kinds.push_back({Action::kDisk, "disk"});
  kinds.back().duration_ms = [](const Action& a) { return a.disk().duration_ms(); };
  kinds.back().set_duration_ms = [](Action& a, uint64_t ms) { a.mutable_disk()->set_duration_ms(ms); };
  kinds.back().random_rate_field = "max_disk_faults_per_minute";
  kinds.back().random_rate = [](const Random& f) { return f.max_disk_faults_per_minute(); };
  kinds.back().random_duration_field = "max_disk_fault_ms";

  kinds.push_back({Action::kPause, "pause"});
  kinds.back().duration_ms = [](const Action& a) { return a.pause().duration_ms(); };
  kinds.back().set_duration_ms = [](Action& a, uint64_t ms) { a.mutable_pause()->set_duration_ms(ms); };
  kinds.back().random_rate_field = "max_pauses_per_minute";
  kinds.back().random_rate = [](const Random& f) { return f.max_pauses_per_minute(); };
  kinds.back().random_duration_field = "max_pause_ms";
  kinds.back().on_real_nodes = true;

  kinds.push_back({Action::kCrashPoint, "crash_point"});
  kinds.back().random_rate_field = "max_crash_points_per_minute";
  kinds.back().random_rate = [](const Random& f) { return f.max_crash_points_per_minute(); };
  kinds.back().random_duration_field = "max_downtime_ms";

  // Random message faults are rates (max_loss, ...), not arrivals.
  kinds.push_back({Action::kMessages, "messages"});
  return kinds;
}

}  // namespace

const std::vector<FaultKind>& FaultKinds() {
  static const std::vector<FaultKind> kinds = Describe();
  return kinds;
}

const FaultKind& FaultKindOf(scenario::FaultAction::KindCase kind) {
  for (const FaultKind& described : FaultKinds()) {
    if (described.kind == kind) return described;
  }
  CHARYBDIS_ASSERT(false && "every fault kind has a descriptor");
  __builtin_unreachable();
}

}  // namespace charybdis
