#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/cql/compression.h"
#include "proto/client.pb.h"
#include "sim/model/partition_model.h"

namespace charybdis::sim {

// What a simulated CQL client writes and reads: request bodies as a driver
// builds them, and answers decoded into values of the reference model
// (sim/model/partition_model.h). Only what the CQL workload and
// tests/cql_sim_test use: simple column types, no prepared metadata.

// A STARTUP's body, asking for `compression` (none: asking for nothing).
std::string StartupBody(cql::Compression compression = cql::Compression::kNone);
// A frame from the server as its client reads it: its body decompressed
// when its flag says so. A body that fails to decompress stays as it came,
// flag set, which DecodeAnswer reports as malformed.
std::string UncompressedFrame(cql::Compression compression, std::string frame);
// An AUTH_RESPONSE's body: the SASL PLAIN token of `role` and `password`
// (docs/security.md).
std::string AuthResponseBody(const std::string& role, const std::string& password);

// A QUERY's body at `level`; `serial` (if set) is its serial consistency,
// for conditional statements; page_size 0: no paging.
std::string QueryBody(const std::string& text, ConsistencyLevel level, ConsistencyLevel serial = CL_UNSET,
                      int32_t page_size = 0, const std::optional<std::string>& paging_state = std::nullopt);

// A PREPARE's body, and an EXECUTE's of the prepared statement `id` (with
// no values), with the parameters QueryBody takes.
std::string PrepareBody(const std::string& text);
std::string ExecuteBody(const std::string& id, ConsistencyLevel level, ConsistencyLevel serial = CL_UNSET,
                        int32_t page_size = 0, const std::optional<std::string>& paging_state = std::nullopt);

// One answer frame, decoded.
struct CqlAnswer {
  enum class Kind { kVoid, kRows, kSetKeyspace, kPrepared, kSchemaChange, kError, kOther };
  Kind kind = Kind::kOther;
  int32_t error_code = 0;  // kError
  std::string error_message;
  // kRows: the column names, and each row's values (nullopt: null) by
  // column, decoded by the column's type (a set<int>: IntSetElements).
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<model::Value>>> rows;
  std::optional<std::string> paging_state;
  std::string prepared_id;  // kPrepared
  // Why a frame could not be decoded (then kind is kOther).
  std::string malformed;
};

// A set<int>'s value in an answer is its native bytes, as text; its
// elements (nullopt: not a set<int>'s value).
std::optional<std::vector<model::Value>> IntSetElements(const model::Value& value);

// A whole answer frame (header and body).
CqlAnswer DecodeAnswer(const std::string& frame);

// The CQL literal of a model value: 5, 'text'.
std::string CqlLiteral(const model::Value& value);

}  // namespace charybdis::sim
