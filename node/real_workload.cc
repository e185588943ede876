#include "node/real_workload.h"

#include <grpcpp/grpcpp.h>

#include <thread>

#include "absl/strings/str_cat.h"
#include "core/token.h"

namespace charybdis::node {

namespace {

using Function = HistoryRecorder::Function;
using Type = HistoryRecorder::Type;

constexpr int64_t kDefaultTimeoutMs = 10000;
constexpr auto kAvoidAfterFailure = std::chrono::seconds(1);

ConsistencyLevel Draw(const google::protobuf::RepeatedField<int>& levels, Random& random,
                      ConsistencyLevel otherwise) {
  if (levels.empty()) return otherwise;
  return static_cast<ConsistencyLevel>(levels.Get(static_cast<int>(random.Below(levels.size()))));
}

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

void RealKvWorkload::RunClient(uint32_t index, Random random) {
  const std::vector<NodeId> nodes = cluster_.nodes();
  std::map<NodeId, std::unique_ptr<Client::Stub>> stubs;
  for (NodeId node : nodes) stubs[node] = cluster_.Connect(node);
  const uint32_t shards = ring_.layout().shards_per_node;
  const ConsistencyLevel serial = spec_.serial_consistency() == CL_UNSET
                                      ? CL_SERIAL
                                      : static_cast<ConsistencyLevel>(spec_.serial_consistency());
  const int64_t timeout_ms = spec_.timeout_ms() ? spec_.timeout_ms() : kDefaultTimeoutMs;
  uint64_t process = next_process_++;
  std::map<std::string, std::optional<std::string>> last_seen;
  std::map<NodeId, std::chrono::steady_clock::time_point> avoid_until;
  uint64_t sequence = 0;
  uint32_t sweep_next = index;
  for (uint32_t remaining = spec_.operations_per_client();;) {
    if (spec_.sweep_keys() ? sweep_next >= spec_.key_count() : remaining == 0) break;
    if (!spec_.sweep_keys()) remaining--;
    // What to do (as sim/kv_workload.cc chooses).
    HistoryRecorder::Operation op;
    op.process = process;
    bool lwt = false;
    if (spec_.sweep_keys()) {
      op.key = absl::StrCat("k", sweep_next);
      sweep_next += spec_.clients();
      op.function = Function::kRead;
      op.consistency = Draw(spec_.read_consistency(), random, CL_QUORUM);
    } else {
      const double u = random.Unit();
      if (u < spec_.read_fraction()) {
        op.function = Function::kRead;
        op.consistency = Draw(spec_.read_consistency(), random, CL_QUORUM);
      } else if (u < spec_.read_fraction() + spec_.delete_fraction()) {
        op.function = Function::kDelete;
        lwt = spec_.lwt_writes();
      } else if (u < spec_.read_fraction() + spec_.delete_fraction() + spec_.cas_fraction()) {
        op.function = Function::kCas;
        lwt = true;
      } else {
        op.function = Function::kWrite;
        lwt = spec_.lwt_writes();
      }
      if (op.function != Function::kRead) {
        op.consistency = lwt ? serial : Draw(spec_.write_consistency(), random, CL_QUORUM);
      }
      op.key = absl::StrCat("k", random.Below(std::max<uint32_t>(spec_.key_count(), 1)));
    }
    const std::string value = absl::StrCat(name_, ":", index, ":", ++sequence);
    ExecuteRequest execute;
    ClientRequest& request = *execute.mutable_request();
    request.set_request_id(sequence);
    if (op.function == Function::kRead) {
      ReadOp* read = request.mutable_read();
      read->set_table(spec_.table());
      read->set_partition_key(op.key);
      read->set_consistency(op.consistency);
    } else {
      WriteOp* write = lwt ? request.mutable_cas()->add_statement()->mutable_write() : request.mutable_write();
      write->set_table(spec_.table());
      write->set_partition_key(op.key);
      if (lwt) {
        request.mutable_cas()->set_serial_consistency(op.consistency);
      } else {
        write->set_consistency(op.consistency);
      }
      if (op.function == Function::kDelete) {
        write->set_delete_row(true);
      } else {
        op.value = value;
        ColumnValue* put = write->add_put();
        put->set_column("v");
        put->set_value(value);
      }
      if (op.function == Function::kCas) {
        CasStatement* statement = request.mutable_cas()->mutable_statement(0);
        auto seen = last_seen.find(op.key);
        if (seen != last_seen.end() && seen->second) {
          op.expected = seen->second;
          Condition* condition = statement->add_condition();
          condition->set_column("v");
          condition->set_op(Condition::EQ);
          condition->set_value(*seen->second);
        } else {
          statement->set_if_not_exists(true);
        }
      }
    }
    // Where to send it: like a driver, a replica's owning shard when
    // shard-aware (the primary for Paxos), else any node.
    const Token token = TokenOf(op.key);
    const auto now = std::chrono::steady_clock::now();
    std::vector<NodeId> usable;
    for (NodeId node : nodes) {
      if (avoid_until[node] <= now) usable.push_back(node);
    }
    if (usable.empty()) usable = nodes;
    NodeId coordinator = usable[random.Below(usable.size())];
    if (spec_.shard_aware()) {
      const bool paxos = lwt || op.consistency == CL_SERIAL || op.consistency == CL_LOCAL_SERIAL;
      const auto& replicas = ring_.ReplicasOf(token);
      coordinator = paxos && avoid_until[replicas.front()] <= now ? replicas.front()
                                                                  : replicas[random.Below(replicas.size())];
      execute.set_has_shard(true);
      execute.set_shard(ShardOf(token, shards));
    }
    history_.Record(op);

    ClientResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
    const grpc::Status status = stubs[coordinator]->Execute(&context, execute, &response);
    // The completion: what the invocation said, but a read's value is what
    // it read (filled in below), not carried over.
    HistoryRecorder::Operation done;
    done.process = op.process;
    done.function = op.function;
    done.key = op.key;
    done.consistency = op.consistency;
    done.expected = op.expected;
    if (op.function == Function::kWrite || op.function == Function::kCas) done.value = op.value;
    std::string error;
    if (!status.ok()) {
      // The node may have taken the request before the call broke.
      done.type = op.function == Function::kRead ? Type::kFail : Type::kInfo;
      error = status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ? "CLIENT_TIMEOUT" : "CONNECTION";
      // Like a driver, leave a node that failed us alone for a while.
      avoid_until[coordinator] = std::chrono::steady_clock::now() + kAvoidAfterFailure;
    } else if (response.code() == ClientResponse::OK) {
      done.type = Type::kOk;
      done.coordinator_node = coordinator;
      done.coordinator_life = response.coordinator_life();
      if (op.function == Function::kRead) {
        done.timestamp = response.newest_timestamp();
        for (const ResultRow& row : response.rows()) {
          for (const ResultCell& cell : row.cells()) {
            if (cell.column() == "v") done.value = cell.value();
          }
        }
        last_seen[op.key] = done.value;
      } else if (op.function == Function::kCas) {
        done.applied = response.applied();
        done.timestamp = response.write_timestamp();
        std::optional<std::string> current;
        if (response.applied()) {
          current = op.value;
        } else {
          for (const ResultRow& row : response.rows()) {
            for (const ResultCell& cell : row.cells()) {
              if (cell.column() == "v") current = cell.value();
            }
          }
        }
        last_seen[op.key] = current;
      } else {
        done.timestamp = response.write_timestamp();
      }
    } else {
      error = ClientResponse::Code_Name(response.code());
      const bool nothing_done = response.code() == ClientResponse::UNAVAILABLE ||
                                response.code() == ClientResponse::INVALID_REQUEST ||
                                response.code() == ClientResponse::READ_TIMEOUT ||
                                response.code() == ClientResponse::READ_FAILURE;
      done.type = nothing_done ? Type::kFail : Type::kInfo;
    }
    history_.Record(done);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (done.type == Type::kOk) outcome_.ok++;
      if (done.type == Type::kFail) outcome_.failed++;
      if (done.type == Type::kInfo) outcome_.unknown++;
      if (!error.empty()) outcome_.errors[error]++;
    }
    // Jepsen's rule: after an unknown outcome the process may still act.
    if (done.type == Type::kInfo) process = next_process_++;
    if (spec_.think_time_ms() > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(spec_.think_time_ms()));
    }
  }
}

}  // namespace charybdis::node
