#pragma once

#include "proto/client.pb.h"

namespace charybdis::repair {

// Adds `part` (a shard's, or a node's) to `total`.
inline void AddRepairSummary(RepairSummary& total, const RepairSummary& part) {
  total.set_ranges(total.ranges() + part.ranges());
  total.set_rows_compared(total.rows_compared() + part.rows_compared());
  total.set_rows_differing(total.rows_differing() + part.rows_differing());
  total.set_rows_fetched(total.rows_fetched() + part.rows_fetched());
  total.set_rows_sent(total.rows_sent() + part.rows_sent());
  total.set_bytes_fetched(total.bytes_fetched() + part.bytes_fetched());
  total.set_bytes_sent(total.bytes_sent() + part.bytes_sent());
  total.set_paxos_rounds_finished(total.paxos_rounds_finished() + part.paxos_rounds_finished());
}

}  // namespace charybdis::repair
