#pragma once

#include <memory>
#include <vector>

#include "core/env/random.h"
#include "proto/scenario.pb.h"
#include "sim/cluster.h"
#include "sim/workload.h"

namespace charybdis::sim {

// Clients that each send echo requests, one at a time, to random shards of
// random nodes and wait for the answer or a timeout. An answer must carry
// the request's payload unchanged.
class PingWorkload final : public Workload {
 public:
  PingWorkload(Simulator& simulator, Cluster& cluster, std::string name,
               const scenario::PingWorkload& spec, Random random);
  ~PingWorkload() override;

  void Start() override;
  bool done() const override { return clients_done_ == clients_.size(); }
  nlohmann::json Results() const override;
  std::vector<CheckResult> Checks() const override;

 private:
  struct Client;

  void SendNext(Client& client);
  void OnReply(Client& client, const Envelope& message);
  void OnTimeout(Client& client, uint64_t request_id);
  void Finish(Client& client);

  Simulator& simulator_;
  Cluster& cluster_;
  std::string name_;
  scenario::PingWorkload spec_;
  Random random_;
  std::vector<std::unique_ptr<Client>> clients_;
  size_t clients_done_ = 0;

  uint64_t requests_ = 0;
  uint64_t answered_ = 0;
  uint64_t timeouts_ = 0;
  uint64_t stale_replies_ = 0;
  uint64_t corrupted_replies_ = 0;
  std::vector<int64_t> latencies_us_;
};

}  // namespace charybdis::sim
