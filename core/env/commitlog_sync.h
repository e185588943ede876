#pragma once

// What a commitlog_sync setting means (proto/durability.proto), once for
// the runtime (node/server/log_writer.cc), the simulated disk (sim/sim_storage.cc)
// and both config validators.

#include <cstdint>
#include <string>

#include "proto/durability.pb.h"

namespace charybdis {

// PERIODIC's default: ScyllaDB's commitlog_sync_period_in_ms.
inline constexpr uint64_t kDefaultSyncPeriodMs = 10'000;

// Milliseconds between PERIODIC fsyncs; 0 for GROUP (every synced write).
inline uint64_t SyncPeriodMs(const CommitlogSync& sync) {
  if (sync.mode() != CommitlogSync::PERIODIC) return 0;
  return sync.period_ms() != 0 ? sync.period_ms() : kDefaultSyncPeriodMs;
}

// What is wrong with the setting's period_ms, or "".
inline std::string CommitlogSyncPeriodProblem(const CommitlogSync& sync) {
  if (sync.mode() != CommitlogSync::PERIODIC && sync.period_ms() != 0) {
    return "is for mode PERIODIC (GROUP syncs every write)";
  }
  return "";
}

}  // namespace charybdis
