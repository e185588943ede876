#pragma once

#include <memory>
#include <vector>

#include "core/env/random.h"
#include "core/topology/topology.h"
#include "proto/scenario.pb.h"
#include "sim/cluster.h"
#include "sim/topology_log_check.h"
#include "sim/workload.h"

namespace charybdis::sim {

// Operators that send topology changes, one at a time each, to random
// shards of random nodes (docs/scenarios.md, "topology"). The changes are
// drawn so that most race or are refused: begins of a join or replacement
// by one of two new ids, of a decommission or removal of the cluster's
// last node, and read-new, finish and roll-back entries for any of them.
// At the end the running nodes' topology logs must agree, and hold every
// acknowledged change at the entry it was acknowledged as.
class TopologyWorkload final : public Workload {
 public:
  TopologyWorkload(Simulator& simulator, Cluster& cluster, std::string name, const scenario::TopologyWorkload& spec,
                   Random random);
  ~TopologyWorkload() override;

  void Start() override;
  bool done() const override { return operators_done_ == operators_.size(); }
  nlohmann::json Results() const override;
  std::vector<CheckResult> Checks() const override;

 private:
  CheckResult CheckShardsFollow() const;
  struct Operator;

  topology::Entry DrawEntry();
  void SendNext(Operator& op);
  void OnReply(Operator& op, const Envelope& message);
  void OnTimeout(Operator& op, uint64_t request_id);
  void ThinkThenSend(Operator& op);

  Simulator& simulator_;
  Cluster& cluster_;
  std::string name_;
  scenario::TopologyWorkload spec_;
  Random random_;
  std::vector<std::unique_ptr<Operator>> operators_;
  size_t operators_done_ = 0;
  // The node that may leave or be replaced (the last), and the new ids
  // that may join or replace it.
  topology::Member movable_;
  static constexpr NodeId kNewcomerIds = 100000;
  NodeId new_ids_[2] = {0, 0};

  std::vector<AcknowledgedTopologyChange> acknowledged_;
  uint64_t sent_ = 0;
  uint64_t refused_ = 0;
  uint64_t failed_ = 0;
  uint64_t timeouts_ = 0;
};

}  // namespace charybdis::sim
