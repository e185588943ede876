#include "core/cql/result.h"

#include "absl/strings/str_cat.h"
#include "core/cql/schema.h"
#include "core/env/assert.h"

namespace charybdis::cql {
namespace {

enum ResultKind : int32_t { kVoid = 1, kRows = 2, kSetKeyspace = 3 };
enum MetadataFlag : int32_t { kGlobalTableSpec = 1, kHasMorePages = 2, kNoMetadata = 4 };

}  // namespace

bool OneTable(const std::vector<ResultColumn>& columns) {
  for (const ResultColumn& column : columns) {
    if (column.keyspace != columns[0].keyspace || column.table != columns[0].table) return false;
  }
  return !columns.empty();
}

void WriteColumnSpecs(Writer& out, const std::vector<ResultColumn>& columns, bool global) {
  CHARYBDIS_ASSERT(!global || !columns.empty());  // OneTable: a global spec names a column's table
  if (global) {
    out.String(columns[0].keyspace);
    out.String(columns[0].table);
  }
  for (const ResultColumn& column : columns) {
    if (!global) {
      out.String(column.keyspace);
      out.String(column.table);
    }
    out.String(column.name);
    WriteTypeOption(out, column.type);
  }
}

void WriteResultMetadata(Writer& out, const std::vector<ResultColumn>& columns,
                         const std::optional<std::string>& paging_state, bool no_metadata) {
  const bool global = OneTable(columns);
  int32_t flags = (global ? kGlobalTableSpec : 0) | (paging_state ? kHasMorePages : 0) | (no_metadata ? kNoMetadata : 0);
  out.Int(flags);
  out.Int(static_cast<int32_t>(columns.size()));
  if (paging_state) out.Bytes(*paging_state);
  if (!no_metadata) WriteColumnSpecs(out, columns, global);
}

Response RowsResult(const ResultSet& result, bool skip_metadata) {
  Writer out;
  out.Int(kRows);
  WriteResultMetadata(out, result.columns, result.paging_state, skip_metadata);
  out.Int(static_cast<int32_t>(result.rows.size()));
  for (const ResultRow& row : result.rows) {
    CHARYBDIS_ASSERT(row.size() == result.columns.size());  // as many values as the metadata's columns
    for (const std::optional<std::string>& value : row) out.Bytes(value);
  }
  return {Opcode::kResult, out.Take()};
}

Response VoidResult() {
  Writer out;
  out.Int(kVoid);
  return {Opcode::kResult, out.Take()};
}

Response SetKeyspaceResult(const std::string& keyspace) {
  Writer out;
  out.Int(kSetKeyspace);
  out.String(keyspace);
  return {Opcode::kResult, out.Take()};
}

Response ErrorResponse(const Error& error) {
  Writer out;
  out.Int(static_cast<int32_t>(error.code));
  out.String(error.message);
  out.Raw(error.details);
  return {Opcode::kError, out.Take()};
}

Error UnpreparedError(const std::string& id) {
  Writer details;
  details.ShortBytes(id);
  return {ErrorCode::kUnprepared, absl::StrCat("Prepared query with ID ", UuidText(id), " not found"), details.Take()};
}

}  // namespace charybdis::cql
