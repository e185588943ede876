#include "node/ctl/real_operations.h"

#include <iostream>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "node/ctl/topology_operation.h"
#include "node/local/local_cluster.h"

namespace charybdis::node {

namespace {

using Operation = scenario::OperationsWorkload::Operation;

// A new node of the local cluster takes the next number: the scenario's
// must be it (new nodes are numbered after the members, in file order).
absl::Status StartNewNode(LocalCluster& cluster, const Operation& operation,
                          const std::function<void(const std::string&)>& progress) {
  const absl::StatusOr<NodeId> id = cluster.AddNode("", operation.kind() == "replace" ? operation.replaced() : 0);
  if (!id.ok()) return id.status();
  if (*id != operation.node()) {
    return absl::InvalidArgumentError(absl::StrCat("the local cluster's next node is ", *id, ", not ", operation.node(),
                                                   ": start new nodes in their scenario order"));
  }
  if (absl::Status started = cluster.Start(*id); !started.ok()) return started;
  return WatchJoin(*id, cluster.client_address(*id), RealOperations::kOperationTimeout, progress);
}

// As the simulator's operator does: a cleanup or a repair is asked again
// until it answers OK. `ask` returns what it did, or why not.
absl::Status AskUntilOk(const Operation& operation, const std::function<absl::StatusOr<std::string>()>& ask,
                        const std::function<void(const std::string&)>& progress) {
  const auto deadline = std::chrono::steady_clock::now() + RealOperations::kOperationTimeout;
  std::string last;
  while (std::chrono::steady_clock::now() < deadline) {
    const absl::StatusOr<std::string> done = ask();
    if (done.ok()) {
      progress(absl::StrCat("node ", operation.node(), " ", *done));
      return absl::OkStatus();
    }
    last = std::string(done.status().message());
    progress(absl::StrCat(operation.kind(), " of node ", operation.node(), " refused: ", last, "; asked again"));
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  return absl::DeadlineExceededError(absl::StrCat(operation.kind(), " did not succeed: ", last));
}

absl::StatusOr<std::string> CleanUpOnce(LocalCluster& cluster, const Operation& operation) {
  const absl::StatusOr<CleanedUp> cleaned = CleanUp(cluster.client_address(operation.node()), std::chrono::seconds(60));
  if (!cleaned.ok()) return cleaned.status();
  return absl::StrCat("removed ", cleaned->pairs, " pairs");
}

absl::StatusOr<std::string> CompactOnce(LocalCluster& cluster, const Operation& operation) {
  const absl::StatusOr<CleanedUp> compacted =
      Compact(cluster.client_address(operation.node()), CompactOp(), std::chrono::seconds(600));
  if (!compacted.ok()) return compacted.status();
  return absl::StrCat("compacted: deleted ", compacted->pairs, " pairs");
}

absl::StatusOr<std::string> RepairOnce(LocalCluster& cluster, const Operation& operation) {
  const absl::StatusOr<RepairSummary> repaired =
      Repair(cluster.client_address(operation.node()), RepairOp(), std::chrono::seconds(600));
  if (!repaired.ok()) return repaired.status();
  return absl::StrCat("repaired ", repaired->ranges(), " ranges: ", repaired->rows_differing(),
                      " rows differed, ", repaired->rows_sent(), " sent");
}

absl::Status RunOne(LocalCluster& cluster, const Operation& operation,
                    const std::function<void(const std::string&)>& progress) {
  if (operation.kind() == "cleanup") {
    return AskUntilOk(operation, [&] { return CleanUpOnce(cluster, operation); }, progress);
  }
  if (operation.kind() == "compact") {
    return AskUntilOk(operation, [&] { return CompactOnce(cluster, operation); }, progress);
  }
  if (operation.kind() == "repair") {
    return AskUntilOk(operation, [&] { return RepairOnce(cluster, operation); }, progress);
  }
  if (operation.kind() == "join" || operation.kind() == "replace") return StartNewNode(cluster, operation, progress);
  if (operation.kind() == "kill") return cluster.Kill(operation.node()).status();
  OperationRequest request;
  request.operation = operation.kind() == "removenode" ? topology::Operation::kRemove : topology::Operation::kDecommission;
  request.node = operation.node();
  request.driver = operation.driver() != 0 ? operation.driver() : operation.node();
  request.driver_address = cluster.client_address(request.driver);
  request.other_addresses = OtherClientAddresses(cluster, request);
  request.timeout = RealOperations::kOperationTimeout;
  return RunOperation(request, progress);
}

}  // namespace

RealOperations::RealOperations(std::string name, const scenario::OperationsWorkload& spec, std::string directory,
                               std::string node_binary)
    : name_(std::move(name)), spec_(spec), directory_(std::move(directory)), node_binary_(std::move(node_binary)) {}

void RealOperations::Run(std::chrono::steady_clock::time_point started) {
  absl::StatusOr<LocalCluster> cluster = LocalCluster::Open(directory_, node_binary_);
  if (!cluster.ok()) {
    failure_ = std::string(cluster.status().message());
    return;
  }
  for (const Operation& operation : spec_.operation()) {
    std::this_thread::sleep_until(started + std::chrono::milliseconds(operation.at_ms()));
    const std::string what = absl::StrCat(operation.kind(), " of node ", operation.node());
    std::cout << "  " << name_ << ": " << what << std::endl;
    const auto began = std::chrono::steady_clock::now();
    const absl::Status done = RunOne(*cluster, operation, [&](const std::string& line) {
      std::cout << "  " << name_ << ": " << line << std::endl;
    });
    if (!done.ok()) {
      failure_ = absl::StrCat(what, ": ", done.message());
      return;
    }
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - began);
    absl::StrAppend(&outcomes_, outcomes_.empty() ? "" : "; ", what, " finished in ", took.count(), " ms");
  }
}

}  // namespace charybdis::node
