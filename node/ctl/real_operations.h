#pragma once

#include <chrono>
#include <string>

#include "proto/scenario.pb.h"

namespace charybdis::node {

// A scenario's operations workload against a local cluster of real nodes
// (scenario::OperationsWorkload), run as an operator runs it with ctl: each
// operation at its at_ms once the one before finished. A join is `ctl
// cluster add`, a replace `ctl replace`, a decommission and a removenode
// ctl's own, a kill `cluster kill` (how a scenario stops a node that
// left, as its operator would). It works on its own view of the
// cluster directory (new nodes add configs to it); reopen the directory
// to see them.
class RealOperations {
 public:
  RealOperations(std::string name, const scenario::OperationsWorkload& spec, std::string directory,
                 std::string node_binary);

  // Runs the operations in order, stopping at the first that fails.
  void Run(std::chrono::steady_clock::time_point started);
  const std::string& name() const { return name_; }
  // NAME.operations_finished: "" when every operation finished, else why
  // not. Each outcome in order, for the report.
  const std::string& failure() const { return failure_; }
  const std::string& outcomes() const { return outcomes_; }

  // How long one operation may take before the run gives up on it.
  static constexpr std::chrono::seconds kOperationTimeout{180};

 private:
  const std::string name_;
  const scenario::OperationsWorkload spec_;
  const std::string directory_;
  const std::string node_binary_;
  std::string failure_;
  std::string outcomes_;
};

}  // namespace charybdis::node
