#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/model/lwt_check.h"
#include "sim/model/partition_model.h"

namespace charybdis::sim::model {

// The plain (not serial) writes and reads of a CQL workload, held against
// the reference model. Plain writes are last-write-wins and commute, so
// whatever set of writes a read's replicas hold, it sees the state that
// set makes. A read must see every write acknowledged before it began at
// a level that meets its own (write + read replicas > replication factor:
// the two quorums share a replica), and may see any write that was sent
// before it ended and did not fail. It is checked cell by cell, which
// is sound (a read the model allows always passes) though weaker than
// asking for one set for the whole row.

struct PlainOp {
  enum class Kind { kWrite, kRead };
  Kind kind = Kind::kWrite;
  LwtOp::Outcome outcome = LwtOp::Outcome::kOk;
  std::string text;       // as sent, for messages
  std::string partition;  // names the partition
  // Real time: its call, and for ok operations its return.
  int64_t call_us = 0;
  int64_t return_us = 0;
  // What the nodes' clocks read while it ran: the "now" of its TTLs and
  // of the expiry a read judges by.
  Moment clock;
  // How many replicas its consistency level waits for.
  uint32_t replicas = 0;
  // kWrite: its effect, at the timestamp the client gave it.
  Write write;
  int64_t timestamp_us = 0;
  // kRead (ok): the slice asked for and the rows returned, pages joined;
  // or for a SELECT COUNT(*), the count it returned (and no rows).
  Slice slice;
  std::vector<ObservedRow> rows;
  std::optional<int64_t> count;
};

struct PlainCheckResult {
  bool admitted = true;
  uint64_t reads = 0;   // ok reads checked
  uint64_t writes = 0;
  std::string detail;   // the first read not admitted, and why
};

PlainCheckResult CheckPlainReads(const std::vector<PlainOp>& operations, const std::vector<bool>& descending,
                                 uint32_t replication_factor);

}  // namespace charybdis::sim::model
