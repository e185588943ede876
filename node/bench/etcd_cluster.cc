#include "node/bench/etcd_cluster.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "node/local/process.h"
#include "proto/etcd_kv.grpc.pb.h"

namespace charybdis::node {

namespace fs = std::filesystem;

absl::StatusOr<EtcdCluster> EtcdCluster::Start(const std::string& directory, const Options& options) {
  if (!fs::exists(options.binary)) {
    return absl::NotFoundError(absl::StrCat(options.binary, " is missing (Debian package etcd-server)"));
  }
  if (fs::exists(directory + "/m1")) return absl::AlreadyExistsError(directory + " holds an etcd cluster already");
  auto ports = FreePorts(2 * options.members);
  if (!ports.ok()) return ports.status();
  EtcdCluster cluster;
  cluster.directory_ = directory;
  std::vector<std::string> initial_cluster;
  for (uint32_t m = 0; m < options.members; m++) {
    initial_cluster.push_back(absl::StrCat("m", m + 1, "=http://127.0.0.1:", (*ports)[2 * m + 1]));
  }
  for (uint32_t m = 0; m < options.members; m++) {
    const std::string name = absl::StrCat("m", m + 1);
    const std::string client_url = absl::StrCat("http://127.0.0.1:", (*ports)[2 * m]);
    const std::string peer_url = absl::StrCat("http://127.0.0.1:", (*ports)[2 * m + 1]);
    fs::create_directories(directory + "/" + name);
    auto pid = StartDetached(options.binary,
                             {"--name", name, "--data-dir", absl::StrCat(directory, "/", name, "/data"),
                              "--listen-client-urls", client_url, "--advertise-client-urls", client_url,
                              "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
                              "--initial-cluster", absl::StrJoin(initial_cluster, ","),
                              "--initial-cluster-state", "new", "--initial-cluster-token", "charybdis-bench",
                              "--max-txn-ops", absl::StrCat(options.max_txn_ops), "--log-level", "warn"},
                             absl::StrCat(directory, "/", name, "/etcd.log"));
    if (!pid.ok()) return pid.status();
    cluster.pids_.push_back(*pid);
    cluster.client_addresses_.push_back(absl::StrCat("127.0.0.1:", (*ports)[2 * m]));
  }
  if (absl::Status serving = cluster.WaitUntilServing(30000); !serving.ok()) return serving;
  return cluster;
}

absl::Status EtcdCluster::WaitUntilServing(int timeout_ms) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (size_t m = 0; m < pids_.size(); m++) {
    auto stub = etcdserverpb::KV::NewStub(grpc::CreateChannel(client_addresses_[m], grpc::InsecureChannelCredentials()));
    while (true) {
      const std::string log = absl::StrCat(directory_, "/m", m + 1, "/etcd.log");
      if (!Alive(pids_[m])) {
        return absl::FailedPreconditionError(absl::StrCat("etcd member m", m + 1, " exited; its log ends:\n", Tail(log)));
      }
      etcdserverpb::PutRequest request;
      request.set_key("charybdis-bench/ready");
      etcdserverpb::PutResponse response;
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1));
      if (stub->Put(&context, request, &response).ok()) break;
      if (std::chrono::steady_clock::now() > deadline) {
        return absl::DeadlineExceededError(absl::StrCat("etcd member m", m + 1, " did not serve in time; its log ends:\n", Tail(log)));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  return absl::OkStatus();
}

absl::Status EtcdCluster::Stop() {
  const std::vector<int> killed = Terminate(pids_, 10000);
  pids_.clear();
  if (!killed.empty()) return absl::DeadlineExceededError("etcd did not stop in time: killed");
  return absl::OkStatus();
}

EtcdCluster::~EtcdCluster() {
  if (!pids_.empty()) Stop().IgnoreError();
}

}  // namespace charybdis::node
