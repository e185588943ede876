// The BATCH message (section 4.1.7): statements given as text or as
// prepared ids, each with its values, run as one batch of writes.

#include "absl/strings/str_cat.h"
#include "core/cql/connection.h"
#include "core/cql/permission_checks.h"
#include "core/cql/system_auth_guard.h"
#include "core/cql/consistency_code.h"
#include "core/env/assert.h"

namespace charybdis::cql {
namespace {

enum BatchFlag : uint8_t { kSerialConsistency = 0x10, kDefaultTimestamp = 0x20, kNamesForValues = 0x40 };

struct BatchEntry {
  std::shared_ptr<const Prepared> prepared;
  std::vector<Value> values;
};

// A BATCH body: its statements, then its parameters. The first statement
// that cannot be used becomes `error` (the body is still read through).
struct BatchBody {
  uint8_t type = 0;
  std::vector<BatchEntry> entries;
  std::optional<Error> error;
  QueryOptions options;
  bool well_formed = false;
};

BatchBody ReadBatch(Reader& in, const Schema& schema, const std::string& keyspace, const PreparedStatements& cache) {
  BatchBody batch;
  batch.type = in.Byte();
  const uint16_t count = in.UnsignedShort();
  for (uint16_t i = 0; i < count && in.ok(); i++) {
    BatchEntry entry;
    if (in.Byte() == 0) {
      PrepareResult prepared = Prepare(schema, keyspace, in.LongString());
      if (!prepared.prepared && !batch.error) batch.error = prepared.error;
      entry.prepared = prepared.prepared;
    } else {
      const std::string id = in.ShortBytes();
      entry.prepared = cache.Find(id, schema);
      if (entry.prepared == nullptr && !batch.error && in.ok()) batch.error = UnpreparedError(id);
    }
    const uint16_t values = in.UnsignedShort();
    for (uint16_t v = 0; v < values && in.ok(); v++) entry.values.push_back(in.Bytes());
    if (entry.prepared != nullptr && (!entry.prepared->table || entry.prepared->system_table) && !batch.error) {
      batch.error = Error{ErrorCode::kInvalid, "a BATCH holds only INSERT, UPDATE and DELETE statements", ""};
    }
    if (entry.prepared != nullptr && !batch.error) batch.error = SystemAuthRefusal(*entry.prepared);
    batch.entries.push_back(std::move(entry));
  }
  CHARYBDIS_ASSERT(batch.entries.size() <= count);
  const std::optional<ConsistencyLevel> consistency = FromCqlConsistency(in.UnsignedShort());
  const uint8_t flags = in.Byte();
  std::optional<ConsistencyLevel> serial = CL_SERIAL;
  if (flags & kSerialConsistency) serial = FromCqlConsistency(in.UnsignedShort());
  if (flags & kDefaultTimestamp) batch.options.timestamp_us = in.Long();
  batch.well_formed = in.ok() && consistency && serial && batch.type <= 2;
  if (!batch.well_formed) return batch;
  batch.options.consistency = *consistency;
  batch.options.serial_consistency = *serial;
  if ((batch.type == 2 || (flags & kNamesForValues)) && !batch.error) {
    batch.error = Error{ErrorCode::kInvalid,
                        batch.type == 2 ? "counter batches are not supported" : "named values in a BATCH are not supported", ""};
  }
  return batch;
}

}  // namespace

bool Connection::BatchMessage(int16_t stream, std::string_view body) {
  Reader in(body);
  BatchBody batch = ReadBatch(in, *backend_.CurrentSchema(), keyspace_, prepared_);
  if (!batch.well_formed) return ProtocolError(stream, "malformed BATCH body");
  batch.options.functions = &backend_.functions();
  if (batch.error) {
    Reply(stream, ErrorResponse(*batch.error));
    return true;
  }
  if (batch.entries.empty()) {
    Reply(stream, VoidResult());
    return true;
  }
  std::vector<auth::Needed> needed;
  for (const BatchEntry& entry : batch.entries) {
    if (entry.prepared == nullptr) continue;
    for (auth::Needed& one : NeededFor(*entry.prepared)) needed.push_back(std::move(one));
  }
  auto shared = std::make_shared<BatchBody>(std::move(batch));
  Authorize(stream, std::move(needed), [this, stream, shared] {
    BatchBody& batch = *shared;
    // ReadBatch made an error of every entry without a statement of a table.
    CHARYBDIS_ASSERT(batch.entries[0].prepared != nullptr);
    CHARYBDIS_ASSERT(batch.entries[0].prepared->table.has_value());
    std::vector<CasStatement> statements;
    bool conditional = false;
    const Table& table = *batch.entries[0].prepared->table;
    bool one_table = true;
    for (const BatchEntry& entry : batch.entries) {
      CHARYBDIS_ASSERT(entry.prepared != nullptr);
      CHARYBDIS_ASSERT(entry.prepared->table.has_value());
      const Table& other = *entry.prepared->table;
      absl::StatusOr<std::vector<CasStatement>> writes = BuildWrites(*entry.prepared, batch.options, entry.values, {});
      one_table = one_table && other.keyspace == table.keyspace && other.name == table.name;
      if (!writes.ok()) {
        Reply(stream, ErrorResponse({ErrorCode::kInvalid, std::string(writes.status().message()), ""}));
        return;
      }
      conditional = conditional || entry.prepared->conditional;
      for (CasStatement& statement : *writes) statements.push_back(std::move(statement));
    }
    if (conditional && !one_table) {
      Reply(stream, ErrorResponse({ErrorCode::kInvalid, "Batch with conditions cannot span multiple tables", ""}));
      return;
    }
    // Type 0 is LOGGED, 1 UNLOGGED (counter batches were refused above).
    CHARYBDIS_ASSERT(batch.type <= 1);
    Run(stream, WritePlan(batch.entries[0].prepared, std::move(statements), conditional,
                          batch.type == 0 ? Batching::kLogged : Batching::kUnlogged, batch.options));
  });
  return true;
}

}  // namespace charybdis::cql
