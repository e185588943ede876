#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/env/address.h"
#include "core/topology/topology.h"
#include "proto/client.pb.h"
#include "proto/node.pb.h"

namespace charybdis::node {

class LocalCluster;

// A membership operation on a running cluster, as `ctl decommission` and
// `ctl removenode` run it (docs/node.md): the begin goes to the driver,
// which streams, runs its barriers and appends the later stages itself
// (core/topology/operation_driver.h).
struct OperationRequest {
  topology::Operation operation = topology::Operation::kDecommission;
  NodeId node = 0;    // the node that leaves, or is removed
  NodeId driver = 0;  // who drives it: the node itself for a decommission
  std::string driver_address;  // the driver's client API (host:port)
  // Other members' client APIs: the topology is watched through them
  // while the driver does not answer (it may have died: then only a
  // roll-back ends the operation, and they show it).
  std::vector<std::string> other_addresses;
  std::chrono::seconds timeout{600};
};

// Begins the operation and watches the driver's topology until the node
// has left (OK). Fails with the cluster's refusal, when the operation was
// rolled back (the node is normal again), or at the timeout (the
// operation goes on; `ctl status` shows where). `progress` gets one line
// per change seen: the topology version and the node's state.
absl::Status RunOperation(const OperationRequest& request, const std::function<void(const std::string&)>& progress);
// The client APIs of `cluster`'s members other than the request's driver
// and node: its `other_addresses` for a local cluster.
std::vector<std::string> OtherClientAddresses(const LocalCluster& cluster, const OperationRequest& request);

// The watching half of RunOperation, for an operation already begun.
absl::Status WatchOperation(const OperationRequest& request, const std::function<void(const std::string&)>& progress);

// Undoes the operation in progress on `node` (`ctl rollback`), through the
// node at `address`: a join or replacement leaves its node `left` (its id
// is spent), a decommission or removenode leaves it normal. Refused once
// the operation's reads moved: it can then only finish. The topology
// version after it.
absl::StatusOr<uint64_t> RollBack(NodeId node, const std::string& address);

// What a node's cleanup (`ctl cleanup`) or compaction (`ctl compact`)
// removed.
// Runs `request` on the node at `address`: its answer when OK, else why
// not (the node's refusal, or that it could not be reached in `timeout`).
absl::StatusOr<ClientResponse> ExecuteOk(const std::string& address, ExecuteRequest request,
                                         std::chrono::seconds timeout);

struct CleanedUp {
  uint64_t pairs = 0;
  uint64_t bytes = 0;
  uint64_t paxos_states = 0;  // a compaction's: Paxos states purged, of the pairs
};
// Asks the node at `address` (its client API) to remove what it no longer
// replicates, and waits up to `timeout` for the answer: what it removed,
// or why not (its refusal, or that it could not be reached).
absl::StatusOr<CleanedUp> CleanUp(const std::string& address, std::chrono::seconds timeout);

// Asks the node at `address` to purge what its tables' tombstone GC allows
// (`ctl compact`), and waits up to `timeout`: the pairs and bytes it
// deleted, or why not.
absl::StatusOr<CleanedUp> Compact(const std::string& address, const CompactOp& request,
                                  std::chrono::seconds timeout);

// Asks the node at `address` to repair its ranges as `request` says
// (`ctl repair`, docs/repair.md), and waits up to `timeout`: its summary,
// or why it stopped (with how far it came in the message).
absl::StatusOr<RepairSummary> Repair(const std::string& address, const RepairOp& request,
                                     std::chrono::seconds timeout);

// Watches a new node (`address`: its client API) until it is a normal
// member (OK), as `ctl cluster add` does: the node asks to join and
// drives its join by itself (core/topology/join_starter.h). Fails when its
// join was rolled back, or at the timeout (the join goes on). `progress`
// gets one line per change: what it waits for before the log holds it,
// then each version, its state and its streams.
absl::Status WatchJoin(NodeId node, const std::string& address, std::chrono::seconds timeout,
                       const std::function<void(const std::string&)>& progress);

}  // namespace charybdis::node
