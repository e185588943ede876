#include "sim/read_your_writes_check.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "core/request/consistency.h"

namespace charybdis::sim {

namespace {

bool IsLocal(const TokenRing& ring, ConsistencyLevel level) {
  const bool per_datacenter =
      ring.layout().replication.strategy == ReplicationConfig::Strategy::kNetworkTopology;
  return per_datacenter &&
         (level == CL_LOCAL_ONE || level == CL_LOCAL_QUORUM || level == CL_LOCAL_SERIAL);
}

// Acknowledged writes of one key at one level from one datacenter, in
// completion order (positions in the history, which is in the order things
// happened, even at equal simulated times), with the running maximum of
// their timestamps.
struct WriteGroup {
  std::vector<size_t> completed;
  std::vector<Timestamp> max_timestamp;
  std::vector<const HistoryOp*> writes;
};

// Replicas a level writes to or reads from before answering, from the
// semantics table (docs/semantics.md), kept apart from core/ on purpose: an
// oracle that shared the coordinator's arithmetic would share its bugs.
uint32_t ReplicasFor(const TokenRing& ring, ConsistencyLevel level, const std::string& dc) {
  const uint32_t all = ring.total_replication_factor();
  const uint32_t local = IsLocal(ring, CL_LOCAL_QUORUM) ? ring.ReplicationFactorIn(dc) : all;
  switch (level) {
    case CL_ANY: return 0;
    case CL_ONE: return 1;
    case CL_TWO: return 2;
    case CL_THREE: return 3;
    case CL_QUORUM: return all / 2 + 1;
    case CL_ALL: return all;
    case CL_LOCAL_ONE: return 1;
    case CL_LOCAL_QUORUM: return local / 2 + 1;
    // A conditional write is acknowledged once a quorum of the Paxos
    // participants accepted it (all replicas for SERIAL, the local ones for
    // LOCAL_SERIAL); a plain read that overlaps them finishes the round.
    case CL_SERIAL: return all / 2 + 1;
    case CL_LOCAL_SERIAL: return local / 2 + 1;
    case CL_EACH_QUORUM: {
      if (!IsLocal(ring, CL_LOCAL_QUORUM)) return all / 2 + 1;
      uint32_t sum = 0;
      for (const auto& [datacenter, factor] : ring.layout().replication.per_datacenter) {
        if (factor > 0) sum += factor / 2 + 1;
      }
      return sum;
    }
    default: return 0;
  }
}

}  // namespace

bool LevelsOverlap(const TokenRing& ring, ConsistencyLevel write, const std::string& write_dc,
                   ConsistencyLevel read, const std::string& read_dc) {
  if (write == CL_ANY) return false;
  const uint32_t written = ReplicasFor(ring, write, write_dc);
  const uint32_t read_from = ReplicasFor(ring, read, read_dc);
  if (IsLocal(ring, write) && IsLocal(ring, read)) {
    return write_dc == read_dc && written + read_from > ring.ReplicationFactorIn(read_dc);
  }
  if (write == CL_EACH_QUORUM && IsLocal(ring, read)) {
    const uint32_t local = ring.ReplicationFactorIn(read_dc);
    return local / 2 + 1 + read_from > local;
  }
  return written + read_from > ring.total_replication_factor();
}

CheckResult CheckReadYourWrites(const TokenRing& ring, const History& history) {
  using GroupKey = std::tuple<std::string, ConsistencyLevel, std::string>;  // register, level, dc
  std::map<GroupKey, WriteGroup> groups;
  std::vector<CompletedOp> reads;
  for (const CompletedOp& op : PairOperations(history)) {
    if (op.completion == nullptr || op.completion->type != HistoryOp::Type::kOk) continue;
    if (op.invoke->function == HistoryOp::Function::kRead) {
      reads.push_back(op);
      continue;
    }
    WriteGroup& group = groups[{op.invoke->Register(), op.invoke->consistency, op.invoke->datacenter}];
    group.writes.push_back(op.completion);
  }
  // Order each group by completion (pairs come in invocation order), then
  // take the running maximum of the timestamps.
  for (auto& [key, group] : groups) {
    auto position = [&](const HistoryOp* op) { return static_cast<size_t>(op - history.data()); };
    std::sort(group.writes.begin(), group.writes.end(),
              [&](const HistoryOp* a, const HistoryOp* b) { return position(a) < position(b); });
    for (const HistoryOp* write : group.writes) {
      group.completed.push_back(position(write));
      const Timestamp previous = group.max_timestamp.empty() ? 0 : group.max_timestamp.back();
      group.max_timestamp.push_back(std::max(previous, write->timestamp));
    }
  }
  CheckResult result{"read_your_writes", true, ""};
  uint64_t checked = 0;
  uint64_t violations = 0;
  for (const CompletedOp& read : reads) {
    auto first = groups.lower_bound({read.invoke->Register(), CL_UNSET, ""});
    for (auto it = first; it != groups.end() && std::get<0>(it->first) == read.invoke->Register(); ++it) {
      const auto& [key, level, datacenter] = it->first;
      if (!LevelsOverlap(ring, level, datacenter, read.invoke->consistency, read.invoke->datacenter)) {
        continue;
      }
      const WriteGroup& group = it->second;
      // Writes acknowledged before the read was invoked.
      const auto invoked = static_cast<size_t>(read.invoke - history.data());
      const size_t before = static_cast<size_t>(
          std::lower_bound(group.completed.begin(), group.completed.end(), invoked) -
          group.completed.begin());
      if (before == 0) continue;
      checked++;
      const Timestamp required = group.max_timestamp[before - 1];
      if (read.completion->timestamp >= required) continue;
      violations++;
      if (violations <= 5) {
        absl::StrAppend(&result.detail, result.detail.empty() ? "" : "; ", "key ", key, ": ",
                        ConsistencyName(read.invoke->consistency), " read at ", read.invoke->time,
                        "ns saw timestamp ", read.completion->timestamp, " but a ",
                        ConsistencyName(level), " write with timestamp ", required,
                        " was acknowledged before it");
      }
    }
  }
  if (reads.empty()) return NothingToCheck("read_your_writes", "no successful reads");
  result.passed = violations == 0;
  if (result.passed) {
    result.detail = absl::StrCat(reads.size(), " reads checked against ", checked,
                                 " overlapping acknowledged write sets");
  } else {
    result.detail = absl::StrCat(violations, " violations: ", result.detail);
  }
  return result;
}

}  // namespace charybdis::sim
