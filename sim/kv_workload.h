#pragma once

#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "core/env/random.h"
#include "core/workload/history.h"
#include "core/workload/kv_model.h"
#include "proto/scenario.pb.h"
#include "sim/client_machine.h"
#include "sim/cluster.h"
#include "sim/workload.h"

namespace charybdis::sim {

// Key-value clients (see KvWorkload in proto/scenario.proto). Every
// operation goes into the shared history for the checkers; latencies of
// successful operations are kept per consistency level for the report.
class KvWorkload final : public Workload {
 public:
  KvWorkload(Simulator& simulator, Cluster& cluster, std::string name,
             const scenario::KvWorkload& spec, const scenario::ClientMachine& client_machine,
             std::string column, Random random, History& history, uint64_t& next_process);
  ~KvWorkload() override;

  void Start() override;
  bool done() const override { return clients_done_ == clients_.size(); }
  nlohmann::json Results() const override;
  std::vector<CheckResult> Checks() const override;

  // Latencies (microseconds) of successful operations, by level.
  struct Latencies {
    std::vector<int64_t> write_us;
    std::vector<int64_t> read_us;
  };
  const std::map<ConsistencyLevel, Latencies>& latencies() const { return latencies_; }
  const std::string& name() const { return name_; }

 private:
  struct Client;
  using Operation = KvOperation;

  Operation LockStepOperation(Client& client);
  // Lock-step: waits until every client finished this step, then releases
  // them all into the next.
  void ArriveAtBarrier(Client& client);
  void ScheduleNext(Client& client);
  void Issue(Client& client);
  Address CoordinatorFor(Client& client, const std::string& key);
  void OnResponse(Client& client, const Envelope& message);
  void OnTimeout(Client& client, uint64_t request_id);
  void Complete(Client& client, HistoryOp::Type type, const ClientResponse* response);
  void Next(Client& client);

  Simulator& simulator_;
  Cluster& cluster_;
  std::string name_;
  scenario::KvWorkload spec_;
  Random random_;
  ClientMachine client_machine_;
  History& history_;
  uint64_t& next_process_;
  std::string table_;
  std::string column_;
  std::string datacenter_;
  std::vector<std::unique_ptr<Client>> clients_;
  size_t clients_done_ = 0;

  std::map<ConsistencyLevel, Latencies> latencies_;
  uint64_t ok_ = 0;
  uint64_t failed_ = 0;
  uint64_t indeterminate_ = 0;
  std::map<std::string, uint64_t> errors_;  // by response code
  std::vector<int64_t> cas_round_trips_;
  std::vector<int64_t> serial_read_round_trips_;
  uint64_t cas_applied_ = 0;
  uint64_t cas_not_applied_ = 0;
  uint64_t cas_attempts_ = 0;
  std::map<uint64_t, size_t> barrier_arrivals_;  // by step
  Nanos first_start_ = -1;
  Nanos last_completion_ = 0;
  uint64_t unavailable_ = 0;
  int64_t slowest_failure_us_ = 0;
  uint64_t client_timestamps_changed_ = 0;
};

}  // namespace charybdis::sim
