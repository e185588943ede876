#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/topology/topology.h"
#include "core/workload/history.h"
#include "proto/scenario.pb.h"
#include "sim/cluster.h"
#include "sim/workload.h"

namespace charybdis::sim {

// An operator that runs a scenario's membership operations one after
// another (scenario::OperationsWorkload): it sends each begin to the
// operation's driver until the topology log holds it (a join: starts the
// new node, which asks by itself), then watches the log, as `ctl status`
// would, until the driver has finished it. At the end
// every operation must have finished, and every write acknowledged before
// a repair began must be on every replica the repair compared.
class OperationsWorkload final : public Workload {
 public:
  // `history`: the clients' operations, which a repair's check reads.
  OperationsWorkload(Simulator& simulator, Cluster& cluster, std::string name,
                     const scenario::OperationsWorkload& spec, const History& history);
  ~OperationsWorkload() override;

  void Start() override;
  bool done() const override { return next_ == spec_.operation_size(); }
  nlohmann::json Results() const override;
  std::vector<CheckResult> Checks() const override;

  // How often the operator looks at the log, and how long it waits for
  // the answer to a begin before it sends it again.
  static constexpr Nanos kWatchInterval = 100 * kMillisecond;
  static constexpr Nanos kBeginTimeout = 10 * kSecond;

 private:
  struct Progress {
    uint32_t attempts = 0;
    // When the log first held its begin; for an operation asked until it
    // answers OK (cleanup, repair, compact, alter), its first ask.
    Nanos begun_at = -1;
    Nanos finished_at = -1;  // when its node was first seen to have left
    std::string refusal;     // why it could not begin
    Nanos last_sent_at = -1;  // asked until OK: the last time it was asked
    // A repair's check, made when it answered OK.
    std::optional<CheckResult> repaired_check;
  };
  topology::Entry BeginOf(const scenario::OperationsWorkload::Operation& operation) const;
  void StartNext();
  // A join starts its new node, which asks by itself; the others send
  // their begin.
  void Launch();
  void SendBegin();
  void SendUntilOk();
  void OnUntilOkReply(const ClientResponse& response);
  void OnReply(const Envelope& message);
  void Watch();
  // The operation `next_` in the newest log: begun (its node moving or
  // gone), or finished (gone).
  bool Begun() const;
  bool Finished() const;
  void Schedule(Nanos delay, std::function<void()> fn);

  Simulator& simulator_;
  Cluster& cluster_;
  const History& history_;
  const std::string name_;
  const scenario::OperationsWorkload spec_;
  NodeId client_ = 0;
  int next_ = 0;  // the operation in hand
  uint64_t outstanding_ = 0;  // the begin awaiting its answer, 0 if none
  uint64_t last_request_id_ = 0;
  std::vector<Progress> progress_;
};

}  // namespace charybdis::sim
