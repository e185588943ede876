#include "node/history_recorder.h"

#include <nlohmann/json.hpp>

namespace charybdis::node {

namespace {

const char* TypeName(HistoryRecorder::Type type) {
  switch (type) {
    case HistoryRecorder::Type::kInvoke: return "invoke";
    case HistoryRecorder::Type::kOk: return "ok";
    case HistoryRecorder::Type::kFail: return "fail";
    case HistoryRecorder::Type::kInfo: return "info";
  }
  return "?";
}

const char* FunctionName(HistoryRecorder::Function function) {
  switch (function) {
    case HistoryRecorder::Function::kRead: return "read";
    case HistoryRecorder::Function::kWrite: return "write";
    case HistoryRecorder::Function::kDelete: return "delete";
    case HistoryRecorder::Function::kCas: return "cas";
  }
  return "?";
}

nlohmann::json ValueOf(const std::optional<std::string>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

void HistoryRecorder::Record(Operation op) {
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
  for (const Operation& op : operations_) {
    std::string level = ConsistencyLevel_Name(op.consistency);
    if (level.rfind("CL_", 0) == 0) level = level.substr(3);
    nlohmann::json line = {{"process", op.process}, {"type", TypeName(op.type)},
                           {"f", FunctionName(op.function)}, {"key", op.key},
                           {"time", op.time}, {"consistency", level}};
    if (op.function == Function::kWrite || (op.function == Function::kRead && op.type == Type::kOk)) {
      line["value"] = ValueOf(op.value);
    }
    if (op.function == Function::kCas) {
      line["value"] = nlohmann::json::array({ValueOf(op.expected), ValueOf(op.value)});
      if (op.type == Type::kOk) line["applied"] = op.applied;
    }
    if (op.type == Type::kOk) line["timestamp"] = op.timestamp;
    if (op.coordinator_life != 0) {
      line["coordinator"] = {op.coordinator_node, 0, op.coordinator_life};
    }
    out << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
}

}  // namespace charybdis::node
