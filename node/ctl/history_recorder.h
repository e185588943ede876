#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <ostream>

#include "core/workload/history.h"

namespace charybdis::node {

// The operations of a run against real nodes, in the history format of the
// simulator (core/workload/history_json.h), so `charybdis sim
// --check_history` and any Jepsen-style checker read it. Times are
// nanoseconds since the recorder was made (steady clock). Any thread may
// record.
class HistoryRecorder {
 public:
  HistoryRecorder() : start_(std::chrono::steady_clock::now()) {}

  // Stamps `op.time` and appends it.
  void Record(HistoryOp op);
  size_t size() const;
  void WriteJson(std::ostream& out) const;

 private:
  const std::chrono::steady_clock::time_point start_;
  mutable std::mutex mutex_;
  History operations_;  // guarded by mutex_
};

}  // namespace charybdis::node
