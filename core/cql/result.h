#pragma once

// What a CQL request answers: RESULT bodies (rows with their metadata,
// void, set keyspace, prepared) and ERROR bodies (section 4.2.5 and 9).

#include <optional>
#include <string>
#include <vector>

#include "core/cql/types.h"
#include "core/cql/wire.h"

namespace charybdis::cql {

struct ResultColumn {
  std::string keyspace;
  std::string table;
  std::string name;
  Type type;
  // What a SELECT's column holds of the table column `name` names, or
  // of `source` for WRITETIME(source), TTL(source) and the aggregates
  // (core/cql/aggregates.h); or the partition's token.
  enum class Holds { kValue, kWritetime, kTtl, kToken, kCount, kMin, kMax, kSum, kAvg };
  Holds holds = Holds::kValue;
  std::string source;

  bool aggregate() const { return holds >= Holds::kCount; }
};

using ResultRow = std::vector<std::optional<std::string>>;  // native values

struct ResultSet {
  std::vector<ResultColumn> columns;
  std::vector<ResultRow> rows;
  // Set when more rows follow: what the next page's request brings back.
  std::optional<std::string> paging_state;
};

// A response's opcode and body.
struct Response {
  Opcode opcode = Opcode::kResult;
  std::string body;
};

// Whether every column is of one table (the metadata's global table spec).
bool OneTable(const std::vector<ResultColumn>& columns);
// The <col_spec>s of a <metadata>, after its global table spec if `global`.
void WriteColumnSpecs(Writer& out, const std::vector<ResultColumn>& columns, bool global);
// The <metadata> of rows or of a prepared statement's result.
void WriteResultMetadata(Writer& out, const std::vector<ResultColumn>& columns,
                         const std::optional<std::string>& paging_state, bool no_metadata);
Response RowsResult(const ResultSet& result, bool skip_metadata);
Response VoidResult();
Response SetKeyspaceResult(const std::string& keyspace);

struct Error {
  ErrorCode code = ErrorCode::kServer;
  std::string message;
  // What follows the message for this code (Unavailable's cl, required
  // and alive, ...), already encoded.
  std::string details;
};

Response ErrorResponse(const Error& error);
// EXECUTE or BATCH of an id this node does not know (its cache was
// cleared, or it restarted): the driver prepares again.
Error UnpreparedError(const std::string& id);

}  // namespace charybdis::cql
