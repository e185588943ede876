#include "core/workload/kv_model.h"

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "core/request/consistency.h"

namespace charybdis {

namespace {

// QUORUM when the list is empty (the simulator's validator refuses that).
ConsistencyLevel Draw(const google::protobuf::RepeatedField<int>& levels, Random& random) {
  if (levels.empty()) return CL_QUORUM;
  return static_cast<ConsistencyLevel>(levels.Get(static_cast<int>(random.Below(levels.size()))));
}

bool Writes(HistoryOp::Function function) {
  return function == HistoryOp::Function::kWrite || function == HistoryOp::Function::kCas;
}

// The value of `column` in the answer's rows, if any.
std::optional<std::string> ValueIn(const ClientResponse& response, const std::string& column) {
  std::optional<std::string> value;
  for (const ResultRow& row : response.rows()) {
    for (const ResultCell& cell : row.cells()) {
      if (cell.column() == column) value = cell.value();
    }
  }
  return value;
}

// Reads, deletes, cas or writes by the workload's fractions.
void DrawFunction(const scenario::KvWorkload& spec, KvOperation& op, Random& random) {
  const ConsistencyLevel serial = SerialLevelOf(spec);
  const double u = random.Unit();
  if (u < spec.read_fraction()) {
    op.function = HistoryOp::Function::kRead;
    op.consistency = Draw(spec.read_consistency(), random);
    return;
  }
  if (u < spec.read_fraction() + spec.delete_fraction()) {
    op.function = HistoryOp::Function::kDelete;
    op.lwt = spec.lwt_writes();
    // Drawn only when asked for: other workloads keep their draws.
    op.partition_delete =
        !op.lwt && spec.partition_delete_fraction() > 0 && random.Chance(spec.partition_delete_fraction());
  } else if (u < spec.read_fraction() + spec.delete_fraction() + spec.cas_fraction()) {
    op.function = HistoryOp::Function::kCas;
    op.lwt = true;
  } else {
    op.function = HistoryOp::Function::kWrite;
    op.lwt = spec.lwt_writes();
  }
  op.consistency = op.lwt ? serial : Draw(spec.write_consistency(), random);
}

}  // namespace

ConsistencyLevel SerialLevelOf(const scenario::KvWorkload& spec) {
  return SerialOrDefault(static_cast<ConsistencyLevel>(spec.serial_consistency()));
}

std::string KvValue(const scenario::KvWorkload& spec, const std::string& workload, uint32_t client,
                    uint64_t request) {
  std::string value = absl::StrCat(workload, ":", client, ":", request);
  if (spec.value_bytes() > value.size()) value.resize(spec.value_bytes(), '.');
  return value;
}

KvOperation NextKvOperation(const scenario::KvWorkload& spec, const std::string& workload,
                            KvClientMemory& memory, Random& random) {
  KvOperation op;
  if (Sweeps(spec)) {
    op.key = absl::StrCat("k", memory.sweep_next);
    memory.sweep_next += spec.clients();
    if (spec.preload_keys()) {
      op.function = HistoryOp::Function::kWrite;
      op.consistency = Draw(spec.write_consistency(), random);
    } else {
      op.consistency = Draw(spec.read_consistency(), random);
    }
    return op;
  }
  DrawFunction(spec, op, random);
  if (spec.key_count() > 0) {
    op.key = absl::StrCat("k", random.Below(spec.key_count()));
  } else if (Writes(op.function) || memory.written.empty()) {
    // Fresh keys: only writes (and IF NOT EXISTS) make new ones.
    if (!Writes(op.function)) {
      op.function = HistoryOp::Function::kWrite;
      op.lwt = spec.lwt_writes();
      op.consistency = op.lwt ? SerialLevelOf(spec) : Draw(spec.write_consistency(), random);
    }
    op.key = absl::StrCat(workload, "-", memory.index, "-", memory.fresh_keys++);
  } else {
    op.key = memory.written[random.Below(memory.written.size())];
  }
  if (op.function == HistoryOp::Function::kCas) {
    auto seen = memory.last_seen.find(op.key);
    if (seen != memory.last_seen.end()) op.expected = seen->second;
  }
  return op;
}

ClientRequest KvRequest(const std::string& table, const std::string& column, const KvOperation& op,
                        int64_t client_timestamp_us) {
  ClientRequest request;
  if (op.function == HistoryOp::Function::kRead) {
    ReadOp* read = request.mutable_read();
    read->set_table(table);
    read->set_partition_key(op.key);
    read->set_consistency(op.consistency);
    return request;
  }
  WriteOp* write = op.lwt ? request.mutable_cas()->add_statement()->mutable_write() : request.mutable_write();
  write->set_table(table);
  write->set_partition_key(op.key);
  if (op.lwt) {
    request.mutable_cas()->set_serial_consistency(op.consistency);
  } else {
    write->set_consistency(op.consistency);
    if (client_timestamp_us > 0) write->set_timestamp(client_timestamp_us);
  }
  if (op.function == HistoryOp::Function::kDelete) {
    if (op.partition_delete) {
      write->set_delete_range(true);  // from the empty key, with no end
    } else {
      write->set_delete_row(true);
    }
  } else {
    ColumnValue* put = write->add_put();
    put->set_column(column);
    put->set_value(op.value);
  }
  if (op.function == HistoryOp::Function::kCas) {
    CasStatement* statement = request.mutable_cas()->mutable_statement(0);
    if (op.expected) {
      Condition* condition = statement->add_condition();
      condition->set_column(column);
      condition->set_op(Condition::EQ);
      condition->set_value(*op.expected);
    } else {
      statement->set_if_not_exists(true);
    }
  }
  return request;
}

HistoryOp KvHistoryEvent(const KvOperation& op, uint64_t process, HistoryOp::Type type,
                         const std::string& table) {
  HistoryOp event;
  event.process = process;
  event.type = type;
  event.function = op.function;
  event.table = table;
  event.key = op.key;
  event.consistency = op.consistency;
  if (op.function == HistoryOp::Function::kWrite || op.function == HistoryOp::Function::kCas) {
    event.has_value = true;
    event.value = op.value;
  }
  event.has_expected = op.expected.has_value();
  event.expected = op.expected.value_or("");
  return event;
}

HistoryOp::Type KvOutcome(ClientResponse::Code code) {
  switch (code) {
    case ClientResponse::OK:
      return HistoryOp::Type::kOk;
    case ClientResponse::UNAVAILABLE:  // nothing was sent
    case ClientResponse::INVALID_REQUEST:
    case ClientResponse::READ_TIMEOUT:  // a read that failed changed nothing
    case ClientResponse::READ_FAILURE:
      return HistoryOp::Type::kFail;
    case ClientResponse::WRITE_TIMEOUT:
      return HistoryOp::Type::kInfo;
    default:
      break;
  }
  // An answer this client does not know: it may have done anything.
  return HistoryOp::Type::kInfo;
}

void ReadKvAnswer(const scenario::KvWorkload& spec, const std::string& column, const KvOperation& op,
                  const ClientResponse& response, HistoryOp& completion, KvClientMemory& memory) {
  CHARYBDIS_ASSERT(response.code() == ClientResponse::OK);
  completion.round_trips = response.round_trips();
  if (op.function == HistoryOp::Function::kRead) {
    completion.timestamp = response.newest_timestamp();
    const std::optional<std::string> value = ValueIn(response, column);
    completion.has_value = value.has_value();
    completion.value = value.value_or("");
    memory.last_seen[op.key] = value;
    return;
  }
  completion.timestamp = response.write_timestamp();
  if (op.function == HistoryOp::Function::kCas) {
    completion.applied = response.applied();
    // The new value, or the current one the coordinator sent back.
    memory.last_seen[op.key] = response.applied() ? std::optional<std::string>(op.value)
                                                  : ValueIn(response, column);
  }
  const bool wrote = op.function == HistoryOp::Function::kWrite ||
                     (op.function == HistoryOp::Function::kCas && response.applied());
  if (spec.key_count() == 0 && wrote) memory.written.push_back(op.key);
}

}  // namespace charybdis
