#pragma once

// The topology log (docs/topology.md): entry k is a Paxos instance of its
// own, a row of system.topology_log, among the owners of the topology the
// entries before it make. Pure: the agent that runs the rounds, stores the
// log and reads it from peers is another piece.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/topology/topology.h"

namespace charybdis::topology {

inline const std::string kTopologyLogTable = "system.topology_log";

// The partition of kTopologyLogTable that holds entry `sequence` (its one
// row has an empty clustering key).
std::string TopologyLogKey(uint64_t sequence);

// An entry as the columns of its row, and back. Values are text: kinds,
// operations and states by name, ids and tokens in decimal.
std::map<std::string, std::string> EntryColumns(const Entry& entry);
// Why a row is not an entry (a column missing or malformed), or the entry.
absl::StatusOr<Entry> EntryOfColumns(const std::map<std::string, std::string>& columns);

class TopologyLog {
 public:
  explicit TopologyLog(Topology bootstrap);

  // Appends entry sequence() + 1 as Paxos decided it. An entry the
  // topology refuses (two operators raced) is kept and changes nothing,
  // alike on every node; its refusal is returned.
  absl::Status Append(Entry entry);

  // Entries decided so far; the topology's version counts only those
  // that applied.
  uint64_t sequence() const { return entries_.size(); }
  const std::vector<Entry>& entries() const { return entries_; }
  const Topology& topology() const { return topology_; }

  // Who decides entry sequence() + 1: the owners now of the topology so
  // far (normal and leaving members), and how many of them make a quorum.
  std::vector<NodeId> ParticipantsOfNext() const;
  uint32_t QuorumOfNext() const { return static_cast<uint32_t>(ParticipantsOfNext().size() / 2 + 1); }

 private:
  std::vector<Entry> entries_;
  Topology topology_;
};

}  // namespace charybdis::topology
