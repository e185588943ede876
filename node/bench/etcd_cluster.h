#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace charybdis::node {

// A local etcd cluster on loopback for the real-node benchmark: members
// named m1..mN, each with its data, log and pid under `directory`. etcd
// comes from Debian's etcd-server (the `charybdis` script installs it).
class EtcdCluster {
 public:
  struct Options {
    uint32_t members = 3;
    std::string binary = "/usr/bin/etcd";
    // The benchmark's largest transaction guards 1000 keys and puts 1000.
    uint32_t max_txn_ops = 1024;
  };

  // Starts a new cluster in `directory` (which must not hold one) and
  // waits until every member answers a write.
  static absl::StatusOr<EtcdCluster> Start(const std::string& directory, const Options& options);
  EtcdCluster(EtcdCluster&&) = default;
  EtcdCluster& operator=(EtcdCluster&&) = delete;
  // Stops what still runs.
  ~EtcdCluster();

  // host:port of member `index` (0-based) for gRPC clients.
  const std::string& client_address(size_t index) const { return client_addresses_[index]; }
  absl::Status Stop();

 private:
  EtcdCluster() = default;
  absl::Status WaitUntilServing(int timeout_ms) const;

  std::string directory_;
  std::vector<std::string> client_addresses_;
  std::vector<int> pids_;
};

}  // namespace charybdis::node
