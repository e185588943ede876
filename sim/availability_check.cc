#include "sim/availability_check.h"

#include "absl/strings/str_cat.h"
#include "core/data/token.h"
#include "core/env/assert.h"
#include "core/request/consistency.h"

namespace charybdis::sim {

namespace {

// Whether the operation had what its level needs: its coordinator and
// enough replicas well throughout.
bool HadWhatItNeeds(const CompletedOp& op, const HealthLog& health, const std::shared_ptr<const TokenRing>& ring, const Topology& topology,
                    Nanos recovery, Nanos end) {
  const NodeId coordinator = op.invoke->coordinator_node;
  CHARYBDIS_ASSERT(coordinator >= 1);
  CHARYBDIS_ASSERT(coordinator <= topology.nodes.size());
  const Nanos from = op.invoke->time;
  const Nanos to = op.completion != nullptr ? op.completion->time : end;
  if (!health.WellThroughout(coordinator, from, to, recovery)) return false;
  std::vector<NodeId> well;
  for (NodeId replica : ring->ReplicasOf(TokenOf(op.invoke->key))) {
    if (health.WellThroughout(replica, from, to, recovery)) well.push_back(replica);
  }
  const std::string& datacenter = topology.datacenters[topology.nodes[coordinator - 1].datacenter];
  return Requirement(op.invoke->consistency, ring, datacenter).SatisfiedBy(well);
}

}  // namespace

CheckResult CheckAvailableWhenWell(const History& history, const HealthLog& health, const std::shared_ptr<const TokenRing>& ring,
                                   const Topology& topology, Nanos recovery, Nanos end) {
  const std::string name = "available_when_well";
  uint64_t owed = 0, failed = 0;
  std::string examples;
  for (const CompletedOp& op : PairOperations(history)) {
    if (op.invoke->function == HistoryOp::Function::kCas || IsSerial(op.invoke->consistency)) continue;
    if (!HadWhatItNeeds(op, health, ring, topology, recovery, end)) continue;
    owed++;
    if (op.completion != nullptr && op.completion->type == HistoryOp::Type::kOk) continue;
    if (++failed <= 3) {
      absl::StrAppend(&examples, examples.empty() ? "" : "; ", "process ", op.invoke->process, " ",
                      ConsistencyName(op.invoke->consistency), " key ", op.invoke->key, " via node ",
                      op.invoke->coordinator_node, " at ", op.invoke->time / kMillisecond, "ms: ",
                      op.completion == nullptr                             ? "never finished"
                      : op.completion->type == HistoryOp::Type::kFail ? "failed"
                                                                           : "unknown outcome");
    }
  }
  if (owed == 0) return NothingToCheck(name, "no plain operation had its replicas well throughout");
  CheckResult result{name, failed == 0,
                     absl::StrCat(owed - failed, " of ", owed, " operations whose replicas were well succeeded")};
  if (failed > 0) absl::StrAppend(&result.detail, ": ", examples);
  return result;
}

}  // namespace charybdis::sim
