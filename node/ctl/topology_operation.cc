#include "node/ctl/topology_operation.h"

#include <grpcpp/grpcpp.h>

#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "core/topology/topology_log.h"
#include "node/local/local_cluster.h"

namespace charybdis::node {

absl::StatusOr<ClientResponse> ExecuteOk(const std::string& address, ExecuteRequest request,
                                         std::chrono::seconds timeout) {
  ClientResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  const grpc::Status status = ConnectClient(address)->Execute(&context, request, &response);
  if (!status.ok()) return absl::UnavailableError(absl::StrCat(address, ": ", status.error_message()));
  if (response.code() != ClientResponse::OK) return absl::FailedPreconditionError(response.message());
  return response;
}

namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(200);
constexpr auto kRequestDeadline = std::chrono::seconds(30);

// Appends `entry` to the topology log through the node at `address`; the
// topology version after it.
absl::StatusOr<uint64_t> Append(const topology::Entry& entry, const std::string& address) {
  ExecuteRequest execute;
  for (const auto& [column, value] : topology::EntryColumns(entry)) {
    (*execute.mutable_request()->mutable_topology_change()->mutable_entry())[column] = value;
  }
  const absl::StatusOr<ClientResponse> response = ExecuteOk(address, std::move(execute), kRequestDeadline);
  if (!response.ok()) return response.status();
  return response->topology_version();
}

absl::Status Begin(const OperationRequest& request) {
  topology::Entry begin;
  begin.kind = topology::Entry::Kind::kBegin;
  begin.operation = request.operation;
  begin.node = request.node;
  begin.driver = request.driver;
  return Append(begin, request.driver_address).status();
}

// What `status` says of node `node`: its state and the stage's progress,
// or (a new node not yet a member) what its join waits for. Empty when
// the status says nothing of it yet.
std::string Seen(const StatusResponse& status, NodeId node) {
  auto state = status.member_state().find(node);
  if (state == status.member_state().end()) {
    return status.join_waiting_for().empty() ? "" : absl::StrCat("node ", node, " waits for ", status.join_waiting_for());
  }
  std::string seen = absl::StrCat("topology version ", status.topology_version(), ": node ", node, " is ", state->second);
  if (status.driving_version() == status.topology_version()) {
    absl::StrAppend(&seen, status.barrier_passed() ? "" : "; barrier: waiting for the members");
    if (status.streams() > 0) {
      absl::StrAppend(&seen, "; streams done: ", status.streams_done(), " of ", status.streams(), " (",
                      status.pairs_streamed(), " pairs, ", status.bytes_streamed(), " bytes stored",
                      status.estimated_ms_left() > 0 ? absl::StrCat("; about ", (status.estimated_ms_left() + 999) / 1000, " s left") : "",
                      ")");
    }
  }
  return seen;
}

// How many polls in a row the driver may miss before the topology is
// watched through the other members (about 2 s).
constexpr int kDriverSilentPolls = 10;

// Where the watch asks: the driver, or while it does not answer, the first
// other member that does.
class StatusSource {
 public:
  StatusSource(NodeId driver, std::string driver_address, std::vector<std::string> others)
      : driver_(driver), driver_address_(std::move(driver_address)), others_(std::move(others)) {}

  // The status, or nullopt when nobody asked answered this time.
  std::optional<StatusResponse> Poll(const std::function<void(const std::string&)>& progress) {
    if (std::optional<StatusResponse> status = Ask(driver_address_)) {
      silent_polls_ = 0;
      return status;
    }
    if (++silent_polls_ < kDriverSilentPolls) return std::nullopt;  // busy or restarting
    for (const std::string& address : others_) {
      std::optional<StatusResponse> status = Ask(address);
      if (!status) continue;
      if (address != watching_through_) {
        progress(absl::StrCat("node ", driver_, ", the driver, does not answer: watching the topology through ",
                              address, " (if node ", driver_, " is gone for good, `ctl rollback ", driver_,
                              "` undoes the operation until its reads move)"));
        watching_through_ = address;
      }
      return status;
    }
    return std::nullopt;
  }

 private:
  static std::optional<StatusResponse> Ask(const std::string& address) {
    StatusResponse status;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    if (!ConnectClient(address)->Status(&context, StatusRequest(), &status).ok()) return std::nullopt;
    return status;
  }

  const NodeId driver_;
  const std::string driver_address_;
  const std::vector<std::string> others_;
  int silent_polls_ = 0;
  std::string watching_through_;
};

// Polls the driver's status (or the others', while it is silent) until
// node `node` is `wanted` (OK) or `undone` (Aborted: the operation was
// rolled back), printing each change seen.
absl::Status WatchUntil(const std::string& what, NodeId node, StatusSource source, std::chrono::seconds timeout,
                        const std::string& wanted, const std::string& undone,
                        const std::function<void(const std::string&)>& progress) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last_seen;
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(kPollInterval);
    const std::optional<StatusResponse> status = source.Poll(progress);
    if (!status) continue;
    const std::string seen = Seen(*status, node);
    if (!seen.empty() && seen != last_seen) progress(seen);
    last_seen = seen;
    auto state = status->member_state().find(node);
    if (state == status->member_state().end()) continue;
    // Done once the driver's last barrier passed too: every live member
    // holds the finish (core/topology/operation_driver.h).
    const bool last_barrier_passed = status->driving_version() != status->topology_version() || status->barrier_passed();
    if (state->second == wanted && last_barrier_passed) return absl::OkStatus();
    if (state->second == undone) return absl::AbortedError(absl::StrCat(what, " was rolled back"));
  }
  return absl::DeadlineExceededError(absl::StrCat(what, " did not finish within ", timeout.count(),
                                                  " s; it goes on (ctl status shows where)"));
}

std::string OperationText(const OperationRequest& request) {
  return absl::StrCat(topology::OperationName(request.operation), " of node ", request.node);
}

}  // namespace

absl::Status RunOperation(const OperationRequest& request, const std::function<void(const std::string&)>& progress) {
  if (absl::Status begun = Begin(request); !begun.ok()) {
    return absl::Status(begun.code(), absl::StrCat(OperationText(request), " did not begin: ", begun.message()));
  }
  progress(absl::StrCat(OperationText(request), " began, driven by node ", request.driver));
  return WatchOperation(request, progress);
}

std::vector<std::string> OtherClientAddresses(const LocalCluster& cluster, const OperationRequest& request) {
  std::vector<std::string> addresses;
  for (NodeId id : cluster.nodes()) {
    if (id != request.driver && id != request.node) addresses.push_back(cluster.client_address(id));
  }
  return addresses;
}

absl::Status WatchOperation(const OperationRequest& request, const std::function<void(const std::string&)>& progress) {
  return WatchUntil(OperationText(request), request.node,
                    StatusSource(request.driver, request.driver_address, request.other_addresses), request.timeout,
                    "left", "normal", progress);
}

absl::StatusOr<uint64_t> RollBack(NodeId node, const std::string& address) {
  topology::Entry entry;
  entry.kind = topology::Entry::Kind::kRollBack;
  entry.node = node;
  return Append(entry, address);
}

absl::StatusOr<CleanedUp> CleanUp(const std::string& address, std::chrono::seconds timeout) {
  ExecuteRequest execute;
  execute.mutable_request()->mutable_cleanup();
  const absl::StatusOr<ClientResponse> response = ExecuteOk(address, std::move(execute), timeout);
  if (!response.ok()) return response.status();
  return CleanedUp{response->cleanup_pairs(), response->cleanup_bytes()};
}

absl::StatusOr<CleanedUp> Compact(const std::string& address, const CompactOp& request,
                                  std::chrono::seconds timeout) {
  ExecuteRequest execute;
  *execute.mutable_request()->mutable_compact() = request;
  const absl::StatusOr<ClientResponse> response = ExecuteOk(address, std::move(execute), timeout);
  if (!response.ok()) return response.status();
  return CleanedUp{response->compacted_pairs(), response->compacted_bytes(), response->compacted_paxos_states()};
}

absl::StatusOr<RepairSummary> Repair(const std::string& address, const RepairOp& request,
                                     std::chrono::seconds timeout) {
  ExecuteRequest execute;
  *execute.mutable_request()->mutable_repair() = request;
  const absl::StatusOr<ClientResponse> response = ExecuteOk(address, std::move(execute), timeout);
  if (!response.ok()) return response.status();
  return response->repair();
}

absl::Status WatchJoin(NodeId node, const std::string& address, std::chrono::seconds timeout,
                       const std::function<void(const std::string&)>& progress) {
  return WatchUntil(absl::StrCat("join of node ", node), node, StatusSource(node, address, {}), timeout, "normal",
                    "left", progress);
}

}  // namespace charybdis::node
