#include "core/workload/history_json.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "core/request/consistency.h"
#include "nlohmann/json.hpp"

namespace charybdis {

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
                           {"table", op.table},
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
    if (op.client_timestamp) line["client_timestamp"] = true;
    if (op.coordinator_life != 0) {
      line["coordinator"] = {op.coordinator_node, op.coordinator_shard, op.coordinator_life};
    }
    // Values a run read may not be UTF-8 (corrupt bytes a checker caught).
    out << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
}

namespace {

// A value as text: strings as they are, anything else (Jepsen's numbers)
// as its JSON.
std::string ValueText(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

absl::Status ParseKind(const nlohmann::json& line, HistoryOp& op) {
  const std::string type = line.at("type").get<std::string>();
  const std::string function = line.at("f").get<std::string>();
  bool known = false;
  for (HistoryOp::Type candidate : {HistoryOp::Type::kInvoke, HistoryOp::Type::kOk,
                                    HistoryOp::Type::kFail, HistoryOp::Type::kInfo}) {
    if (type == TypeName(candidate)) op.type = candidate, known = true;
  }
  if (!known) return absl::InvalidArgumentError(absl::StrCat("unknown type \"", type, "\""));
  known = false;
  for (HistoryOp::Function candidate : {HistoryOp::Function::kRead, HistoryOp::Function::kWrite,
                                        HistoryOp::Function::kDelete, HistoryOp::Function::kCas}) {
    if (function == FunctionName(candidate)) op.function = candidate, known = true;
  }
  if (!known) return absl::InvalidArgumentError(absl::StrCat("unknown f \"", function, "\""));
  return absl::OkStatus();
}

absl::Status ParseValue(const nlohmann::json& value, HistoryOp& op) {
  if (op.function == HistoryOp::Function::kCas) {
    if (!value.is_array() || value.size() != 2) {
      return absl::InvalidArgumentError("a cas value is [expected, new]");
    }
    op.has_expected = !value[0].is_null();
    if (op.has_expected) op.expected = ValueText(value[0]);
    op.has_value = true;
    op.value = ValueText(value[1]);
  } else if (!value.is_null()) {
    op.has_value = true;
    op.value = ValueText(value);
  }
  return absl::OkStatus();
}

// Our fields, or Jepsen's subset of them: without a key the history is
// one register; without a consistency every operation is a register
// (SERIAL) operation; without a time, 0.
absl::StatusOr<HistoryOp> ParseOperation(const nlohmann::json& line, const std::string& table,
                                         const std::string& datacenter) {
  HistoryOp op;
  op.table = table;
  op.datacenter = datacenter;
  op.process = line.at("process").get<uint64_t>();
  if (absl::Status kind = ParseKind(line, op); !kind.ok()) return kind;
  if (line.contains("key")) op.key = ValueText(line.at("key"));
  // The table of the operation (ours); else the one the reader was given.
  if (line.contains("table")) op.table = line.at("table").get<std::string>();
  if (line.contains("time")) op.time = line.at("time").get<Nanos>();
  op.consistency = CL_SERIAL;
  if (line.contains("consistency")) {
    ConsistencyLevel level = CL_UNSET;
    if (!ConsistencyLevel_Parse("CL_" + line.at("consistency").get<std::string>(), &level)) {
      return absl::InvalidArgumentError("unknown consistency level");
    }
    op.consistency = level;
  }
  if (line.contains("value")) {
    if (absl::Status value = ParseValue(line.at("value"), op); !value.ok()) return value;
  }
  // Jepsen's ok cas applied (a cas that did not is a fail).
  op.applied = op.function == HistoryOp::Function::kCas && op.type == HistoryOp::Type::kOk;
  if (line.contains("applied")) op.applied = line.at("applied").get<bool>();
  if (line.contains("timestamp")) op.timestamp = line.at("timestamp").get<Timestamp>();
  if (line.contains("client_timestamp")) op.client_timestamp = line.at("client_timestamp").get<bool>();
  if (line.contains("coordinator")) {
    const nlohmann::json& coordinator = line.at("coordinator");
    if (!coordinator.is_array() || coordinator.size() != 3) {
      return absl::InvalidArgumentError("a coordinator is [node, shard, life]");
    }
    op.coordinator_node = coordinator[0].get<uint32_t>();
    op.coordinator_shard = coordinator[1].get<uint32_t>();
    op.coordinator_life = coordinator[2].get<uint64_t>();
  }
  return op;
}

// One operation at a time per process: an invocation, then at most one
// completion of the same function.
absl::Status CheckPairing(const HistoryOp& op, std::map<uint64_t, HistoryOp::Function>& open) {
  if (op.type == HistoryOp::Type::kInvoke) {
    if (!open.emplace(op.process, op.function).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "process ", op.process, " invokes again before its last operation completed"));
    }
    return absl::OkStatus();
  }
  auto it = open.find(op.process);
  if (it == open.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("process ", op.process, " completes an operation it never invoked"));
  }
  if (it->second != op.function) {
    return absl::InvalidArgumentError(absl::StrCat("process ", op.process, " completes a ",
                                                   FunctionName(op.function), " it invoked as a ",
                                                   FunctionName(it->second)));
  }
  open.erase(it);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<History> ReadHistoryJson(std::istream& in, const std::string& table,
                                        const std::string& datacenter) {
  History history;
  std::map<uint64_t, HistoryOp::Function> open;  // process -> function in flight
  std::string text;
  for (int number = 1; std::getline(in, text); number++) {
    if (text.empty()) continue;
    absl::StatusOr<HistoryOp> op = absl::InvalidArgumentError("not a JSON object");
    try {
      const nlohmann::json line = nlohmann::json::parse(text);
      // Jepsen's nemesis (a process named, not numbered) is no client.
      if (line.is_object() && line.contains("process") && line.at("process").is_string()) continue;
      if (line.is_object()) op = ParseOperation(line, table, datacenter);
    } catch (const nlohmann::json::exception& error) {
      op = absl::InvalidArgumentError(error.what());
    }
    if (op.ok()) {
      if (absl::Status paired = CheckPairing(*op, open); !paired.ok()) op = paired;
    }
    if (!op.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("history line ", number, ": ", op.status().message()));
    }
    history.push_back(std::move(*op));
  }
  return history;
}

}  // namespace charybdis
