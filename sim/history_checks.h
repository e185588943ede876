#pragma once

#include "proto/scenario.pb.h"

namespace charybdis::sim {

// The checks of a scenario that need nothing but its client history, so
// they also run on histories recorded against real nodes. One list for the
// validator, the runner (sim/history_check.cc) and the command line.
struct HistoryCheckField {
  const char* name;  // the field of `checks`
  bool (scenario::Checks::*wanted)() const;
  bool needs_kv;  // kv workloads record what it checks
};

inline constexpr HistoryCheckField kHistoryChecks[] = {
    {"linearizable", &scenario::Checks::linearizable, false},
    {"read_your_writes", &scenario::Checks::read_your_writes, true},
    {"monotonic_reads", &scenario::Checks::monotonic_reads, true},
    {"last_write_wins", &scenario::Checks::last_write_wins, true},
    {"coordinator_timestamps", &scenario::Checks::coordinator_timestamps, true},
    {"reads_return_written_values", &scenario::Checks::reads_return_written_values, true},
};

}  // namespace charybdis::sim
