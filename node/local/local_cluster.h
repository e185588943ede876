#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/env/address.h"
#include "node/server/power_loss_fs.h"
#include "proto/node.grpc.pb.h"

namespace charybdis::node {

// A cluster of real nodes on loopback, in the spirit of Cassandra's ccm.
// Everything lives under one directory: per node N, `nodeN/node.textproto`
// (its config), `nodeN/data/` (its RocksDB directories), `nodeN/node.log`
// and `nodeN/pid` while it runs. Addresses and ports are picked at `Create`
// (Options::own_addresses).
// A node config table of `name` with one column, v (GC by default).
Table TableNamed(const std::string& name);

// How a client reaches the nodes' gRPC API: through TLS when `ca_pem` (the
// CA that signed their certificates) is not empty; as `role` with
// `password` on every call when `role` is not empty (docs/security.md).
struct ClientAccess {
  std::string ca_pem;
  std::string role;
  std::string password;
};

class LocalCluster {
 public:
  struct Options {
    uint32_t nodes = 3;
    uint32_t shards = 2;
    uint32_t replication_factor = 3;
    // Tables, as the node config has them; empty: kv and registers, each
    // with column v.
    std::vector<Table> tables;
    // Extra lines for every node's config (timeouts, hint window...).
    std::string extra_config;
    // The bootstrap CQL schema, one statement per entry (cql_schema).
    std::vector<std::string> cql_schema;
    // Journal every file's syncs so that `kill --power` can cut power
    // (node/server/power_loss_fs.h). A benchmark measures a node as deployed,
    // without it.
    bool power_loss_journal = true;
    // Each node on an address of its own, 127.0.B.N, on the standard ports
    // (kStandardPorts), as ccm does and as drivers that read system.peers
    // expect. Off, or where no block is free or 127.0.B.N cannot be bound:
    // every node on 127.0.0.1, on free ports of its own.
    bool own_addresses = false;
    // The CQL port asks for a password (docs/security.md): the superuser
    // kSuperuser, with a random password written to superuser_password_path().
    bool auth = false;
    // TLS on the CQL port (required), the gRPC API and between nodes
    // (mutual): a throwaway CA in ca.pem and a certificate per node
    // (node/local/certificates.h).
    bool tls = false;
  };
  static constexpr char kSuperuser[] = "admin";
  // Internode, client (gRPC), metrics, CQL and CQL shard-aware: Cassandra's
  // storage, Thrift and native ports, ScyllaDB's Prometheus and shard-aware.
  static constexpr int kStandardPorts[] = {7000, 9160, 9180, 9042, 19042};

  // Writes the configs of a new cluster into `directory` (which must not
  // hold one already).
  static absl::StatusOr<LocalCluster> Create(const std::string& directory,
                                             const std::string& node_binary, Options options);
  // Writes the config of a new node (docs/topology.md, "Joining"): the
  // next id, the next address of the cluster's block on the standard
  // ports (or free ports on 127.0.0.1, as the cluster has them), in the
  // first member's datacenter, on `rack` (empty: a rack of its own). Its
  // members are the bootstrap members, as every node's. Start it, and it
  // joins by itself. With `replaces`, it replaces that node, which must not
  // run, where that node stood (its datacenter and rack; `rack` unused).
  absl::StatusOr<NodeId> AddNode(const std::string& rack, NodeId replaces = 0);
  // Where a cluster with Options::auth keeps its superuser's password:
  // alone, for the nodes; and "name password", for people and tools.
  std::string superuser_password_path() const;
  std::string superuser_path() const;
  // Its CA and superuser, as its own stubs use them.
  const ClientAccess& access() const { return access_; }
  // An existing cluster's directory.
  static absl::StatusOr<LocalCluster> Open(const std::string& directory,
                                           const std::string& node_binary);

  // Starts node `id` (a no-op if it runs) / every node; waits until each
  // started node answers and sees every running node up (or the timeout).
  absl::Status Start(NodeId id, int timeout_ms = 30000);
  absl::Status StartAll(int timeout_ms = 30000);
  // SIGKILL, no questions asked; with `power_cut`, then every file of its
  // data directory loses what it had not fsync'd (node/server/power_loss_fs.h).
  // Returns what the power cut took.
  absl::StatusOr<DroppedData> Kill(NodeId id, bool power_cut = false);
  // SIGSTOP / SIGCONT: a node that is alive but answers nobody.
  absl::Status Pause(NodeId id);
  absl::Status Resume(NodeId id);
  // SIGTERM and wait for a graceful exit (SIGKILL after `timeout_ms`).
  absl::Status Stop(NodeId id, int timeout_ms = 15000);
  absl::Status StopAll();
  // Node `a` and node `b` drop each other's traffic / everyone heals.
  absl::Status Partition(NodeId a, NodeId b);
  absl::Status Heal();

  bool Running(NodeId id) const;
  // Node `id`'s resident memory (VmRSS); 0 when it is not running.
  uint64_t ResidentBytes(NodeId id) const;
  // Node `id`'s counter `name` (core/telemetry/metrics.h, or storage_* of its log
  // writers) summed over its shards, from its /metrics text.
  absl::StatusOr<uint64_t> MetricTotal(NodeId id, const std::string& name) const;
  std::vector<NodeId> nodes() const;
  std::string client_address(NodeId id) const;
  std::string cql_address(NodeId id) const;
  std::string metrics_address(NodeId id) const;
  std::string data_directory(NodeId id) const;
  std::string log_path(NodeId id) const;
  const std::string& directory() const { return directory_; }
  std::unique_ptr<Client::Stub> Connect(NodeId id) const;
  // Waits until every running node sees exactly the running nodes up.
  absl::Status WaitForViews(int timeout_ms);

 private:
  // Options::auth: the superuser's password written, and every node's
  // config asking for passwords.
  absl::Status SetUpAuth(NodeConfigFile& shared) const;
  // Options::tls: node `id`'s certificate for `host`, and its config's tls.
  absl::Status SetUpNodeTls(NodeId id, const std::string& host, NodeConfigFile& config) const;
  // Node `id`'s directory and config file (`config`, then `extra_lines`),
  // with its certificate first when `tls`.
  absl::Status WriteNodeConfig(NodeId id, const std::string& host, bool tls, NodeConfigFile config,
                               const std::string& extra_lines) const;
  LocalCluster(std::string directory, std::string node_binary)
      : directory_(std::move(directory)), node_binary_(std::move(node_binary)) {}
  absl::Status Load();
  std::string NodeDirectory(NodeId id) const;
  absl::Status StopNodes(const std::vector<NodeId>& ids, int timeout_ms);
  int Pid(NodeId id) const;

  std::string directory_;
  std::string node_binary_;
  std::vector<NodeConfigFile> configs_;  // by node id - 1
  ClientAccess access_;  // its CA (TLS) and superuser (auth), for its stubs
};

// A client stub that reconnects quickly (nodes come and go).
std::unique_ptr<Client::Stub> ConnectClient(const std::string& address, const ClientAccess& access);
// The same with the process's access: what UseClientAccess was given
// (ctl's --ca and --user, or its local cluster's), or none.
std::unique_ptr<Client::Stub> ConnectClient(const std::string& address);
void UseClientAccess(ClientAccess access);

// The `charybdis-node` binary beside the running executable (ctl and the
// node are built into one Bazel package).
std::string NodeBinaryBesideSelf();

}  // namespace charybdis::node
