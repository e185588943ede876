#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/workload.h"

namespace charybdis::sim {

// An entry of the topology log as the columns of its row
// (core/topology/topology_log.h: EntryColumns).
using TopologyEntryColumns = std::map<std::string, std::string>;

// A change the cluster acknowledged: entry `sequence` of the log is it.
struct AcknowledgedTopologyChange {
  uint64_t sequence = 0;
  TopologyEntryColumns entry;
};

// The topology logs the running nodes hold at the end of a run must agree:
// each a prefix of the longest, since each entry is one Paxos decision.
CheckResult CheckTopologyLogsAgree(const std::string& name, const std::map<uint32_t, std::vector<TopologyEntryColumns>>& logs);

// Once faults end and the run settles, every running node holds the whole
// log: heartbeats tell a node behind, and it reads what it lacks.
CheckResult CheckTopologyLogsConverge(const std::string& name,
                                      const std::map<uint32_t, std::vector<TopologyEntryColumns>>& logs);

// Every acknowledged change is the entry at its sequence in `log` (the
// longest at the end) when `log` reaches that far: an acknowledged entry
// is never replaced by another.
CheckResult CheckAcknowledgedTopologyChanges(const std::string& name, const std::vector<TopologyEntryColumns>& log,
                                             const std::vector<AcknowledgedTopologyChange>& acknowledged);

}  // namespace charybdis::sim
