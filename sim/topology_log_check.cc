#include "sim/topology_log_check.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace charybdis::sim {

namespace {

std::string Text(const TopologyEntryColumns& entry) { return absl::StrJoin(entry, " ", absl::PairFormatter("=")); }

}  // namespace

CheckResult CheckTopologyLogsAgree(const std::string& name,
                                   const std::map<uint32_t, std::vector<TopologyEntryColumns>>& logs) {
  const std::string check = absl::StrCat(name, ".topology_logs_agree");
  if (logs.empty()) return NothingToCheck(check, "no node was running at the end");
  const std::vector<TopologyEntryColumns>* longest = &logs.begin()->second;
  for (const auto& [node, log] : logs) {
    if (log.size() > longest->size()) longest = &log;
  }
  for (const auto& [node, log] : logs) {
    for (size_t i = 0; i < log.size(); i++) {
      if (log[i] == (*longest)[i]) continue;
      return CheckResult{check, false,
                         absl::StrCat("node ", node, "'s entry ", i + 1, " is {", Text(log[i]),
                                      "} where a longer log holds {", Text((*longest)[i]), "}")};
    }
  }
  return CheckResult{check, true, absl::StrCat(logs.size(), " nodes, logs of up to ", longest->size(), " entries")};
}

CheckResult CheckTopologyLogsConverge(const std::string& name,
                                      const std::map<uint32_t, std::vector<TopologyEntryColumns>>& logs) {
  const std::string check = absl::StrCat(name, ".topology_logs_converge");
  if (logs.empty()) return NothingToCheck(check, "no node was running at the end");
  std::string sizes;
  bool equal = true;
  for (const auto& [node, log] : logs) {
    absl::StrAppend(&sizes, sizes.empty() ? "" : ", ", "node ", node, " ", log.size());
    equal = equal && log.size() == logs.begin()->second.size();
  }
  return CheckResult{check, equal, absl::StrCat("entries held: ", sizes)};
}

CheckResult CheckAcknowledgedTopologyChanges(const std::string& name, const std::vector<TopologyEntryColumns>& log,
                                             const std::vector<AcknowledgedTopologyChange>& acknowledged) {
  const std::string check = absl::StrCat(name, ".acknowledged_topology_changes_kept");
  if (acknowledged.empty()) return NothingToCheck(check, "no topology change was acknowledged");
  size_t seen = 0;
  std::map<uint64_t, const TopologyEntryColumns*> by_sequence;
  for (const AcknowledgedTopologyChange& change : acknowledged) {
    if (change.sequence == 0) {
      return CheckResult{check, false, absl::StrCat("a change {", Text(change.entry), "} was acknowledged at entry 0")};
    }
    auto [it, first] = by_sequence.emplace(change.sequence, &change.entry);
    if (!first && *it->second != change.entry) {
      return CheckResult{check, false,
                         absl::StrCat("entry ", change.sequence, " was acknowledged as {", Text(*it->second),
                                      "} and as {", Text(change.entry), "}")};
    }
    if (change.sequence > log.size()) continue;
    seen++;
    if (log[change.sequence - 1] == change.entry) continue;
    return CheckResult{check, false,
                       absl::StrCat("entry ", change.sequence, " was acknowledged as {", Text(change.entry),
                                    "} but the log holds {", Text(log[change.sequence - 1]), "}")};
  }
  return CheckResult{check, true,
                     absl::StrCat(acknowledged.size(), " acknowledged, ", seen, " within the longest log of ",
                                  log.size(), " entries")};
}

}  // namespace charybdis::sim
