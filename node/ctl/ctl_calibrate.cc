#include "node/ctl/ctl_calibrate.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "node/ctl/calibrate.h"
#include "node/local/local_cluster.h"

namespace charybdis::node {

namespace {

// Clients per burst, as in the lock-step contention loop, and bursts.
constexpr uint32_t kBurstClients = 16;
constexpr uint32_t kBursts = 20;

// One traced request's answer (nullopt: the call failed).
std::optional<ClientResponse> Traced(Client::Stub& stub, ClientRequest request) {
  request.set_trace(true);
  ExecuteRequest execute;
  *execute.mutable_request() = std::move(request);
  ClientResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  if (!stub.Execute(&context, execute, &response).ok()) return std::nullopt;
  return response;
}

ClientRequest QuorumPut(const std::string& key) {
  ClientRequest put;
  WriteOp* write = put.mutable_write();
  write->set_table("kv");
  write->set_partition_key(key);
  write->set_consistency(CL_QUORUM);
  ColumnValue* value = write->add_put();
  value->set_column("v");
  value->set_value(key);
  return put;
}

ClientRequest QuorumGet(const std::string& key) {
  ClientRequest get;
  get.mutable_read()->set_table("kv");
  get.mutable_read()->set_partition_key(key);
  get.mutable_read()->set_consistency(CL_QUORUM);
  return get;
}

// Sequential traced puts and gets: the hops, reads, syncs and the
// client's cost beyond them. Returns how many failed.
uint32_t CollectSequential(Client::Stub& stub, uint32_t count, HopSamples& samples) {
  uint32_t failed = 0;
  for (uint32_t i = 0; i < count; i++) {
    const std::string key = absl::StrCat("calibrate-", i);
    for (const ClientRequest& request : {QuorumPut(key), QuorumGet(key)}) {
      const auto sent = std::chrono::steady_clock::now();
      const std::optional<ClientResponse> response = Traced(stub, request);
      const int64_t round_trip_us =
          std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - sent).count();
      if (!response || response->code() != ClientResponse::OK) {
        failed++;
        continue;
      }
      CollectHops(*response, samples);
      CollectClientCost(*response, round_trip_us, samples);
    }
  }
  return failed;
}

// Bursts of kBurstClients threads on one channel, released together by a
// barrier, each sending one traced get: when each reached the node (the
// nodes share this machine's clock). A burst with a failed request is
// left out.
void CollectBursts(Client::Stub& stub, HopSamples& samples) {
  std::vector<std::vector<std::optional<int64_t>>> arrivals_us(kBursts,
                                                               std::vector<std::optional<int64_t>>(kBurstClients));
  std::barrier release(kBurstClients);
  std::vector<std::thread> clients;
  for (uint32_t client = 0; client < kBurstClients; client++) {
    clients.emplace_back([&, client] {
      for (uint32_t burst = 0; burst < kBursts; burst++) {
        release.arrive_and_wait();
        const std::optional<ClientResponse> response = Traced(stub, QuorumGet(absl::StrCat("calibrate-", client)));
        if (response && response->code() == ClientResponse::OK) arrivals_us[burst][client] = FirstStepUs(*response);
        // The next burst starts once this one is answered.
        release.arrive_and_wait();
      }
    });
  }
  for (std::thread& client : clients) client.join();
  for (const auto& burst : arrivals_us) {
    std::vector<int64_t> known;
    for (const std::optional<int64_t>& at_us : burst) {
      if (at_us) known.push_back(*at_us);
    }
    if (known.size() == burst.size()) CollectBurst(std::move(known), samples);
  }
}

}  // namespace

absl::StatusOr<MeasuredProfile> MeasureProfile(const std::string& address, uint32_t count) {
  auto stub = ConnectClient(address);
  HopSamples samples;
  samples.client_cores = std::max(std::thread::hardware_concurrency(), 1u);
  const uint32_t failed = CollectSequential(*stub, count, samples);
  if (samples.between_nodes.empty() || samples.sync.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("the traces held no hops between nodes or no syncs (", failed,
                                                      " requests failed): is a local cluster of several nodes up?"));
  }
  CollectBursts(*stub, samples);
  return MeasuredProfile{
      ProfileOf(samples),
      absl::StrCat(2 * count, " traced QUORUM puts and gets: ", samples.between_nodes.size(), " hops between nodes, ",
                   samples.within_node.size(), " within one, ", samples.sync.size(), " synced writes, ",
                   samples.read.size(), " replica reads; ", samples.send_spacing_us.size(), " bursts of ",
                   kBurstClients, " gets released together")};
}

}  // namespace charybdis::node
