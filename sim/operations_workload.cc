#include "sim/operations_workload.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "core/topology/topology_log.h"
#include "sim/convergence_check.h"

namespace charybdis::sim {

namespace {

constexpr Nanos kRetryDelay = 1 * kSecond;

// A join or a replace: its new node starts, and asks by itself.
bool IsJoin(const scenario::OperationsWorkload::Operation& operation) {
  return operation.kind() == "join" || operation.kind() == "replace";
}

topology::Operation OperationOf(const std::string& kind) {
  if (kind == "decommission") return topology::Operation::kDecommission;
  CHARYBDIS_ASSERT(kind == "removenode");  // the validator allows no other
  return topology::Operation::kRemove;
}

bool AskedUntilOk(const scenario::OperationsWorkload::Operation& operation) {
  return operation.kind() == "cleanup" || operation.kind() == "alter" || operation.kind() == "repair" ||
         operation.kind() == "compact";
}

}  // namespace

OperationsWorkload::OperationsWorkload(Simulator& simulator, Cluster& cluster, std::string name,
                                       const scenario::OperationsWorkload& spec, const History& history)
    : simulator_(simulator),
      cluster_(cluster),
      history_(history),
      name_(std::move(name)),
      spec_(spec),
      progress_(static_cast<size_t>(spec.operation_size())) {
  client_ = cluster_.AddClient(0);
  cluster_.network().SetReceiver(Address{client_, 0}, [this](const Envelope& message) { OnReply(message); });
}

OperationsWorkload::~OperationsWorkload() { cluster_.network().ClearReceivers(SimNetwork::HostOf(client_)); }

void OperationsWorkload::Start() { StartNext(); }

topology::Entry OperationsWorkload::BeginOf(const scenario::OperationsWorkload::Operation& operation) const {
  topology::Entry entry;
  entry.kind = topology::Entry::Kind::kBegin;
  entry.operation = OperationOf(operation.kind());
  entry.node = operation.node();
  entry.driver = operation.driver() != 0 ? operation.driver() : operation.node();
  return entry;
}

void OperationsWorkload::StartNext() {
  if (done()) return;
  const Nanos at = static_cast<Nanos>(spec_.operation(next_).at_ms()) * kMillisecond;
  Schedule(std::max<Nanos>(0, at - simulator_.now()), [this] { Launch(); });
}

void OperationsWorkload::Launch() {
  if (AskedUntilOk(spec_.operation(next_))) return SendUntilOk();
  if (spec_.operation(next_).kind() == "kill") {
    progress_[next_].attempts++;
    cluster_.Crash(spec_.operation(next_).node());
    return Watch();
  }
  if (!IsJoin(spec_.operation(next_))) return SendBegin();
  progress_[next_].attempts++;
  cluster_.StartNewNode(spec_.operation(next_).node());
  Watch();
}

void OperationsWorkload::SendBegin() {
  if (Begun()) return Watch();
  const topology::Entry begin = BeginOf(spec_.operation(next_));
  progress_[next_].attempts++;
  Envelope message;
  ClientRequest& request = *message.mutable_client_request();
  request.set_request_id(++last_request_id_);
  for (const auto& [column, value] : topology::EntryColumns(begin)) {
    (*request.mutable_topology_change()->mutable_entry())[column] = value;
  }
  outstanding_ = last_request_id_;
  cluster_.network().Send(Address{client_, 0}, Address{begin.driver, 0}, std::move(message));
  Schedule(kBeginTimeout, [this, id = outstanding_] {
    if (outstanding_ != id) return;  // answered
    outstanding_ = 0;
    SendBegin();
  });
}

// A cleanup (ctl cleanup), a repair (ctl repair) or an alter goes to its
// node until it answers OK: refused while an operation runs or the node
// catches up, stopped by a topology change or a replica that does not
// answer, or unanswered (a change of replication answers once its data
// moved), it is asked again. An alter asked again once it took changes
// nothing, and is answered OK.
void OperationsWorkload::SendUntilOk() {
  if (progress_[next_].begun_at < 0) progress_[next_].begun_at = simulator_.now();
  progress_[next_].attempts++;
  progress_[next_].last_sent_at = simulator_.now();
  Envelope message;
  ClientRequest& request = *message.mutable_client_request();
  request.set_request_id(++last_request_id_);
  const scenario::OperationsWorkload::Operation& operation = spec_.operation(next_);
  if (operation.kind() == "cleanup") {
    request.mutable_cleanup();
  } else if (operation.kind() == "repair") {
    request.mutable_repair();
  } else if (operation.kind() == "compact") {
    request.mutable_compact();
  } else {
    request.mutable_schema_change()->set_statement(operation.statement());
  }
  outstanding_ = last_request_id_;
  cluster_.network().Send(Address{client_, 0}, Address{operation.node(), 0}, std::move(message));
  Schedule(kBeginTimeout, [this, id = outstanding_] {
    if (outstanding_ != id) return;  // answered
    outstanding_ = 0;
    SendUntilOk();
  });
}

void OperationsWorkload::OnUntilOkReply(const ClientResponse& response) {
  Progress& progress = progress_[next_];
  if (response.code() != ClientResponse::OK) {
    progress.refusal = response.message();
    return Schedule(kRetryDelay, [this] { SendUntilOk(); });
  }
  progress.refusal.clear();
  progress.finished_at = simulator_.now();
  if (spec_.operation(next_).kind() == "repair") {
    // Now: a later repair of the same ranges must not hide what this one
    // left out. The attempt answered OK was the last one sent.
    progress.repaired_check = CheckRepairedWritesEverywhere(
        cluster_, history_, spec_.operation(next_).node(), progress.last_sent_at,
        absl::StrCat(name_, ".repaired_writes_everywhere.", next_));
  }
  next_++;
  StartNext();
}

void OperationsWorkload::OnReply(const Envelope& message) {
  CHARYBDIS_ASSERT(message.has_client_response());
  const ClientResponse& response = message.client_response();
  if (response.request_id() != outstanding_ || outstanding_ == 0) return;  // late, or duplicated
  outstanding_ = 0;
  if (AskedUntilOk(spec_.operation(next_))) return OnUntilOkReply(response);
  if (response.code() == ClientResponse::OK || Begun()) return Watch();
  if (response.code() == ClientResponse::INVALID_REQUEST) {
    // Refused by the cluster's topology (the agent read the log first):
    // this operation cannot run, and the next one may.
    progress_[next_].refusal = response.message();
    next_++;
    return StartNext();
  }
  Schedule(kRetryDelay, [this] { SendBegin(); });
}

void OperationsWorkload::Watch() {
  Progress& progress = progress_[next_];
  if (Finished()) {
    if (progress.begun_at < 0) progress.begun_at = simulator_.now();
    progress.finished_at = simulator_.now();
    next_++;
    return StartNext();
  }
  if (!Begun() && !IsJoin(spec_.operation(next_))) return SendBegin();  // rolled back: begin again
  if (progress.begun_at < 0 && Begun()) progress.begun_at = simulator_.now();
  Schedule(kWatchInterval, [this] { Watch(); });
}

// A join has begun once the log holds its node, and finished once the
// node is normal; a decommission or a removal once their node is no
// longer normal, and once it has left; a kill at once, and once its node
// is down.
bool OperationsWorkload::Begun() const {
  if (spec_.operation(next_).kind() == "kill") return true;
  const topology::Topology newest = cluster_.NewestTopology();
  const topology::Member* member = newest.Find(spec_.operation(next_).node());
  if (IsJoin(spec_.operation(next_))) return member != nullptr;
  return member != nullptr && member->state != topology::NodeState::kNormal;
}

bool OperationsWorkload::Finished() const {
  if (spec_.operation(next_).kind() == "kill") return !cluster_.node(spec_.operation(next_).node()).running();
  const topology::Topology newest = cluster_.NewestTopology();
  const topology::Member* member = newest.Find(spec_.operation(next_).node());
  const topology::NodeState done =
      IsJoin(spec_.operation(next_)) ? topology::NodeState::kNormal : topology::NodeState::kLeft;
  if (member == nullptr || member->state != done) return false;
  // As ctl: once the driver's last barrier passed too (every live member
  // holds the finish), so that a kill that follows may stop the node.
  const auto& operation = spec_.operation(next_);
  const NodeId driver = !IsJoin(operation) && operation.driver() != 0 ? operation.driver() : operation.node();
  const SimNode& driving = cluster_.node(driver);
  if (!driving.running()) return false;
  const topology::OperationDriver::Progress progress = driving.OperationProgress();
  return progress.version != driving.TopologyLog().topology().version() || progress.barrier_passed;
}

void OperationsWorkload::Schedule(Nanos delay, std::function<void()> fn) {
  simulator_.Schedule(simulator_.now() + delay, EventTag{EventKind::kClient, SimNetwork::HostOf(client_), 0, 0},
                      true, std::move(fn));
}

nlohmann::json OperationsWorkload::Results() const {
  nlohmann::json operations = nlohmann::json::array();
  for (int i = 0; i < spec_.operation_size(); i++) {
    const Progress& progress = progress_[static_cast<size_t>(i)];
    operations.push_back({{"kind", spec_.operation(i).kind()},
                          {"node", spec_.operation(i).node()},
                          {"attempts", progress.attempts},
                          {"begun_ms", progress.begun_at < 0 ? -1 : progress.begun_at / kMillisecond},
                          {"finished_ms", progress.finished_at < 0 ? -1 : progress.finished_at / kMillisecond},
                          {"refusal", progress.refusal}});
  }
  return nlohmann::json{{"name", name_}, {"kind", "operations"}, {"done", done()}, {"operations", operations}};
}

std::vector<CheckResult> OperationsWorkload::Checks() const {
  CheckResult result{absl::StrCat(name_, ".operations_finished"), true, ""};
  for (int i = 0; i < spec_.operation_size(); i++) {
    const Progress& progress = progress_[static_cast<size_t>(i)];
    const std::string what = absl::StrCat(spec_.operation(i).kind(), " of node ", spec_.operation(i).node());
    std::string outcome;
    if (progress.finished_at >= 0) {
      outcome = absl::StrCat(what, " finished ", (progress.finished_at - progress.begun_at) / kMillisecond,
                             " ms after it began");
    } else {
      result.passed = false;
      result.liveness = progress.refusal.empty();
      outcome = progress.refusal.empty() ? absl::StrCat(what, progress.begun_at < 0 ? " never began" : " never finished")
                                         : absl::StrCat(what, " was refused: ", progress.refusal);
    }
    absl::StrAppend(&result.detail, result.detail.empty() ? "" : "; ", outcome);
  }
  std::vector<CheckResult> checks{result};
  for (const Progress& progress : progress_) {
    if (progress.repaired_check.has_value()) checks.push_back(*progress.repaired_check);
  }
  return checks;
}

}  // namespace charybdis::sim
