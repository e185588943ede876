#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/env/random.h"
#include "core/cluster/token_ring.h"
#include "core/workload/kv_model.h"
#include "node/ctl/history_recorder.h"
#include "node/local/local_cluster.h"
#include "proto/node.grpc.pb.h"
#include "proto/scenario.pb.h"

namespace charybdis::node {

// A scenario's kv workload against real nodes: its clients, one thread
// each, one request at a time, choosing operations, building requests and
// reading answers with the client model the simulator uses
// (core/workload/kv_model.h), recording every operation.
class RealKvWorkload {
 public:
  struct Outcome {
    uint64_t ok = 0;
    uint64_t failed = 0;
    uint64_t unknown = 0;
    std::map<std::string, uint64_t> errors;
  };

  RealKvWorkload(std::string name, const scenario::KvWorkload& spec, const LocalCluster& cluster,
                 const TokenRing& ring, HistoryRecorder& history,
                 std::atomic<uint64_t>& next_process, Random random);

  // Runs every client to completion.
  void Run();
  const Outcome& outcome() const { return outcome_; }
  const std::string& name() const { return name_; }
  // The workload's `expect`, if it has one: "" when it holds.
  std::string UnmetExpectation() const;

 private:
  void RunClient(uint32_t index, Random random);
  NodeId CoordinatorFor(const KvOperation& op, const std::vector<NodeId>& nodes,
                        std::map<NodeId, std::chrono::steady_clock::time_point>& avoid_until,
                        Random& random, ExecuteRequest& execute) const;
  void Count(HistoryOp::Type type, const std::string& error);

  const std::string name_;
  const scenario::KvWorkload spec_;
  const LocalCluster& cluster_;
  const TokenRing& ring_;
  HistoryRecorder& history_;
  std::atomic<uint64_t>& next_process_;
  Random random_;
  std::mutex mutex_;
  Outcome outcome_;  // guarded by mutex_ while clients run
};

}  // namespace charybdis::node
