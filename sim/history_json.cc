#include "sim/history_json.h"

#include "core/coordinator/consistency.h"
#include "absl/strings/str_cat.h"
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
    if (op.client_timestamp) line["client_timestamp"] = true;
    if (op.coordinator_life != 0) {
      line["coordinator"] = {op.coordinator_node, op.coordinator_shard, op.coordinator_life};
    }
    out << line.dump() << "\n";
  }
}

namespace {

absl::StatusOr<HistoryOp> ParseOperation(const nlohmann::json& line, const std::string& table,
                                         const std::string& datacenter) {
  HistoryOp op;
  op.table = table;
  op.datacenter = datacenter;
  op.process = line.at("process").get<uint64_t>();
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
  op.key = line.at("key").get<std::string>();
  op.time = line.at("time").get<Nanos>();
  if (line.contains("consistency")) {
    ConsistencyLevel level = CL_UNSET;
    if (!ConsistencyLevel_Parse("CL_" + line.at("consistency").get<std::string>(), &level)) {
      return absl::InvalidArgumentError("unknown consistency level");
    }
    op.consistency = level;
  }
  if (line.contains("value")) {
    const nlohmann::json& value = line.at("value");
    if (op.function == HistoryOp::Function::kCas) {
      if (!value.is_array() || value.size() != 2) {
        return absl::InvalidArgumentError("a cas value is [expected, new]");
      }
      op.has_expected = !value[0].is_null();
      if (op.has_expected) op.expected = value[0].get<std::string>();
      op.has_value = true;
      op.value = value[1].get<std::string>();
    } else if (!value.is_null()) {
      op.has_value = true;
      op.value = value.get<std::string>();
    }
  }
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

}  // namespace

absl::StatusOr<History> ReadHistoryJson(std::istream& in, const std::string& table,
                                        const std::string& datacenter) {
  History history;
  std::string text;
  for (int number = 1; std::getline(in, text); number++) {
    if (text.empty()) continue;
    absl::StatusOr<HistoryOp> op = absl::InvalidArgumentError("not a JSON object");
    try {
      const nlohmann::json line = nlohmann::json::parse(text);
      if (line.is_object()) op = ParseOperation(line, table, datacenter);
    } catch (const nlohmann::json::exception& error) {
      op = absl::InvalidArgumentError(error.what());
    }
    if (!op.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("history line ", number, ": ", op.status().message()));
    }
    history.push_back(std::move(*op));
  }
  return history;
}

}  // namespace charybdis::sim
