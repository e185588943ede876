#include "node/ctl/history_recorder.h"

#include "core/workload/history_json.h"

namespace charybdis::node {

void HistoryRecorder::Record(HistoryOp op) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Stamped under the lock, so the file's order is the order of time.
  op.time = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_)
                .count();
  operations_.push_back(std::move(op));
}

size_t HistoryRecorder::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return operations_.size();
}

void HistoryRecorder::WriteJson(std::ostream& out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  WriteHistoryJson(operations_, out);
}

}  // namespace charybdis::node
