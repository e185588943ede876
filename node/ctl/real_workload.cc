#include "node/ctl/real_workload.h"

#include <grpcpp/grpcpp.h>

#include <thread>

#include "absl/strings/str_cat.h"
#include "core/data/token.h"

namespace charybdis::node {

namespace {

constexpr int64_t kDefaultTimeoutMs = 10000;
constexpr auto kAvoidAfterFailure = std::chrono::seconds(1);

}  // namespace

RealKvWorkload::RealKvWorkload(std::string name, const scenario::KvWorkload& spec,
                               const LocalCluster& cluster, const TokenRing& ring,
                               HistoryRecorder& history, std::atomic<uint64_t>& next_process,
                               Random random)
    : name_(std::move(name)),
      spec_(spec),
      cluster_(cluster),
      ring_(ring),
      history_(history),
      next_process_(next_process),
      random_(random) {}

void RealKvWorkload::Run() {
  std::vector<std::thread> clients;
  for (uint32_t i = 0; i < spec_.clients(); i++) {
    clients.emplace_back([this, i, random = random_.Fork(i)] { RunClient(i, random); });
  }
  for (auto& client : clients) client.join();
}

std::string RealKvWorkload::UnmetExpectation() const {
  if (!spec_.has_expect()) return "";
  const uint64_t total = outcome_.ok + outcome_.failed + outcome_.unknown;
  const double ok_fraction = total == 0 ? 0 : static_cast<double>(outcome_.ok) / static_cast<double>(total);
  if (ok_fraction < spec_.expect().min_ok_fraction()) {
    return absl::StrCat(outcome_.ok, " of ", total, " operations ok, below ", spec_.expect().min_ok_fraction());
  }
  return "";
}

// Where to send an operation: like a driver, a replica's owning shard when
// shard-aware (the primary for Paxos), else any node that has not failed us
// lately.
NodeId RealKvWorkload::CoordinatorFor(const KvOperation& op, const std::vector<NodeId>& nodes,
                                      std::map<NodeId, std::chrono::steady_clock::time_point>& avoid_until,
                                      Random& random, ExecuteRequest& execute) const {
  const auto now = std::chrono::steady_clock::now();
  std::vector<NodeId> usable;
  for (NodeId node : nodes) {
    if (avoid_until[node] <= now) usable.push_back(node);
  }
  if (usable.empty()) usable = nodes;
  NodeId coordinator = usable[random.Below(usable.size())];
  if (spec_.shard_aware()) {
    const Token token = TokenOf(op.key);
    const bool paxos = op.lwt || op.consistency == CL_SERIAL || op.consistency == CL_LOCAL_SERIAL;
    const auto& replicas = ring_.ReplicasOf(token);
    coordinator = paxos && avoid_until[replicas.front()] <= now ? replicas.front()
                                                                : replicas[random.Below(replicas.size())];
    execute.set_has_shard(true);
    execute.set_shard(ShardOf(token, ring_.layout().shards_per_node));
  }
  return coordinator;
}

void RealKvWorkload::RunClient(uint32_t index, Random random) {
  // The workload's coordinators, if it names them, as in the simulator.
  std::vector<NodeId> nodes = cluster_.nodes();
  if (spec_.coordinator_size() > 0) nodes.assign(spec_.coordinator().begin(), spec_.coordinator().end());
  std::map<NodeId, std::unique_ptr<Client::Stub>> stubs;
  for (NodeId node : nodes) stubs[node] = cluster_.Connect(node);
  const int64_t timeout_ms = spec_.timeout_ms() ? spec_.timeout_ms() : kDefaultTimeoutMs;
  uint64_t process = next_process_++;
  KvClientMemory memory;
  memory.index = index;
  memory.sweep_next = index;
  std::map<NodeId, std::chrono::steady_clock::time_point> avoid_until;
  uint64_t sequence = 0;
  for (uint32_t remaining = spec_.operations_per_client();;) {
    if (Sweeps(spec_) ? memory.sweep_next >= spec_.key_count() : remaining == 0) break;
    if (!Sweeps(spec_)) remaining--;
    KvOperation op = NextKvOperation(spec_, name_, memory, random);
    op.value = KvValue(spec_, name_, index, ++sequence);
    ExecuteRequest execute;
    *execute.mutable_request() = KvRequest(spec_.table(), "v", op, 0);
    execute.mutable_request()->set_request_id(sequence);
    const NodeId coordinator = CoordinatorFor(op, nodes, avoid_until, random, execute);
    history_.Record(KvHistoryEvent(op, process, HistoryOp::Type::kInvoke, spec_.table()));

    ClientResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
    const grpc::Status status = stubs[coordinator]->Execute(&context, execute, &response);
    // A read's value is what it read (filled in below).
    HistoryOp done = KvHistoryEvent(op, process, HistoryOp::Type::kOk, spec_.table());
    std::string error;
    if (!status.ok()) {
      // The node may have taken the request before the call broke.
      done.type = op.function == HistoryOp::Function::kRead ? HistoryOp::Type::kFail : HistoryOp::Type::kInfo;
      error = status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ? "CLIENT_TIMEOUT" : "CONNECTION";
      // Like a driver, leave a node that failed us alone for a while.
      avoid_until[coordinator] = std::chrono::steady_clock::now() + kAvoidAfterFailure;
    } else {
      done.type = KvOutcome(response.code());
      done.coordinator_node = coordinator;
      done.coordinator_life = response.coordinator_life();
      if (done.type == HistoryOp::Type::kOk) {
        ReadKvAnswer(spec_, "v", op, response, done, memory);
      } else {
        error = ClientResponse::Code_Name(response.code());
      }
    }
    history_.Record(done);
    Count(done.type, error);
    // Jepsen's rule: after an unknown outcome the process may still act.
    if (done.type == HistoryOp::Type::kInfo) process = next_process_++;
    if (spec_.think_time_ms() > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(spec_.think_time_ms()));
    }
  }
}

void RealKvWorkload::Count(HistoryOp::Type type, const std::string& error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (type == HistoryOp::Type::kOk) outcome_.ok++;
  if (type == HistoryOp::Type::kFail) outcome_.failed++;
  if (type == HistoryOp::Type::kInfo) outcome_.unknown++;
  if (!error.empty()) outcome_.errors[error]++;
}

}  // namespace charybdis::node
