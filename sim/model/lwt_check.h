#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/model/partition_model.h"

namespace charybdis::sim::model {

// The conditional writes and serial reads of a CQL workload, held against
// the reference model (partition_model.h) by the linearizability search
// (sim/linearization_search.h), one partition at a time: a wrong
// condition outcome, a wrong current row or a wrong serial read fails,
// not only a wrong register value.

// A statement of a conditional write (or batch): its condition, if any,
// and its write. All of an operation's conditions are judged on the
// partition before any of its writes, which then apply at one timestamp.
struct LwtStatement {
  std::optional<RowCondition> condition;
  Write write;
};

struct LwtOp {
  enum class Kind { kConditional, kSerialRead };
  // ok: happened with this result; fail: definitely had no effect; info:
  // unknown (it may have taken effect at any time after its call, or never).
  enum class Outcome { kOk, kFail, kInfo };

  Kind kind = Kind::kConditional;
  Outcome outcome = Outcome::kOk;
  std::string text;  // the statement as sent, for messages
  std::string partition;  // names the partition, for grouping and messages
  uint64_t process = 0;
  // Real time, which orders operations: its call, and for ok operations
  // its return.
  int64_t call_us = 0;
  int64_t return_us = 0;
  // What the nodes' clocks read while it ran (skew included): the "now"
  // its TTLs and conditions were judged by. For an unknown outcome, until
  // as late as it may still take effect.
  Moment clock;
  // kConditional.
  std::vector<LwtStatement> statements;
  bool applied = false;  // ok
  // ok and not applied: the rows its conditions looked at, as returned.
  std::vector<ObservedRow> current_rows;
  // kSerialRead (ok): the slice and what it returned.
  Slice slice;
  std::vector<ObservedRow> rows;
};

struct LwtCheckResult {
  bool linearizable = true;
  bool exhausted = false;  // gave up on some partition: no verdict there
  uint64_t partitions = 0;
  uint64_t groups = 0;  // of rows no operation spans, each searched alone
  uint64_t operations = 0;
  std::string detail;
};

// `descending`: the table's clustering order. `max_states` bounds the
// search per group of rows: cql_lwt_multi_dc's seed 21 (640 operations on
// six rows of one partition) needs between 2 and 5 million, 1.6 GB and
// half a minute; 500,000 gave up on it.
LwtCheckResult CheckLwtLinearizable(const std::vector<LwtOp>& operations, const std::vector<bool>& descending,
                                    uint64_t max_states = 5'000'000);

}  // namespace charybdis::sim::model
