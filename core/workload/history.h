#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/data/cell.h"
#include "core/env/time.h"
#include "proto/client.pb.h"

namespace charybdis {

// One event of a client operation, Jepsen-style: an invocation, then one
// completion: ok, fail (definitely no effect) or info (unknown: it may
// have taken effect). A process that gets an info is never reused.
struct HistoryOp {
  enum class Type { kInvoke, kOk, kFail, kInfo };
  enum class Function { kRead, kWrite, kDelete, kCas };

  uint64_t process = 0;
  Type type = Type::kInvoke;
  Function function = Function::kRead;
  std::string table;
  std::string key;
  // Writes and cas: the value written. Completed reads: the value read, if
  // any.
  bool has_value = false;
  std::string value;
  // Cas: the value required (absent: IF NOT EXISTS); completed cas: whether
  // it applied.
  bool has_expected = false;
  std::string expected;
  bool applied = false;
  // LWTs and serial reads: round trips the coordinator waited for.
  uint32_t round_trips = 0;
  Nanos time = 0;  // simulated
  ConsistencyLevel consistency = CL_UNSET;
  std::string datacenter;  // the client's
  // Ok writes and deletes: the write's timestamp. Ok reads: the newest
  // timestamp of what was read, tombstones included (0 if nothing).
  Timestamp timestamp = 0;
  // The write carried the client's own timestamp (else the coordinator's).
  bool client_timestamp = false;
  // Completions: the coordinator shard that answered, and its life.
  uint32_t coordinator_node = 0;
  uint32_t coordinator_shard = 0;
  uint64_t coordinator_life = 0;

  // What the checkers tell registers apart by: the same key in two tables
  // is two registers.
  std::string Register() const { return table + "/" + key; }
};

using History = std::vector<HistoryOp>;

// An invocation paired with its completion (if any).
struct CompletedOp {
  const HistoryOp* invoke = nullptr;
  const HistoryOp* completion = nullptr;  // null if the run ended first
};

// Pairs every invocation with the completion of the same process.
std::vector<CompletedOp> PairOperations(const History& history);

}  // namespace charybdis
