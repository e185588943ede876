#include "sim/history_json.h"

#include "core/coordinator/consistency.h"
#include "nlohmann/json.hpp"

namespace charybdis::sim {

namespace {

const char* TypeName(HistoryOp::Type type) {
  switch (type) {
    case HistoryOp::Type::kInvoke: return "invoke";
    case HistoryOp::Type::kOk: return "ok";
    case HistoryOp::Type::kFail: return "fail";
    case HistoryOp::Type::kInfo: return "info";
  }
  return "?";
}

const char* FunctionName(HistoryOp::Function function) {
  switch (function) {
    case HistoryOp::Function::kRead: return "read";
    case HistoryOp::Function::kWrite: return "write";
    case HistoryOp::Function::kDelete: return "delete";
    case HistoryOp::Function::kCas: return "cas";
  }
  return "?";
}

}  // namespace

void WriteHistoryJson(const History& history, std::ostream& out) {
  for (const HistoryOp& op : history) {
    nlohmann::json line = {{"process", op.process},
                           {"type", TypeName(op.type)},
                           {"f", FunctionName(op.function)},
                           {"key", op.key},
                           {"time", op.time},
                           {"consistency", ConsistencyName(op.consistency)}};
    const bool carries_value = op.function == HistoryOp::Function::kWrite ||
                               (op.function == HistoryOp::Function::kRead &&
                                op.type == HistoryOp::Type::kOk);
    if (carries_value) {
      line["value"] = op.has_value ? nlohmann::json(op.value) : nlohmann::json(nullptr);
    }
    if (op.function == HistoryOp::Function::kCas) {
      // [expected, new]; expected null for IF NOT EXISTS.
      line["value"] = nlohmann::json::array(
          {op.has_expected ? nlohmann::json(op.expected) : nlohmann::json(nullptr), op.value});
      if (op.type == HistoryOp::Type::kOk) line["applied"] = op.applied;
    }
    if (op.type == HistoryOp::Type::kOk) line["timestamp"] = op.timestamp;
    out << line.dump() << "\n";
  }
}

}  // namespace charybdis::sim
