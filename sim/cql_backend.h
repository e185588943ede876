#pragma once

#include <functional>
#include <map>
#include <memory>

#include "core/cql/auth_service.h"
#include "core/cql/connection.h"
#include "core/env/probe.h"
#include "core/env/random.h"
#include "sim/cluster.h"

namespace charybdis::sim {

// The node side of a simulated client's CQL connection: the connection
// (core/cql/connection.h) runs with the node's schema, as it does in the
// node's CQL server, and each request travels over the simulated network
// to the node's shard that owns it (shard 0 for DDL); answers come back
// as messages to the client's address. Used by tests/cql_sim_test and the
// CQL workload (sim/cql_workload.h).
class SimCqlBackend final : public cql::Backend {
 public:
  // `client` is an address of the cluster's (Cluster::AddClient) that this
  // backend alone receives on; `probes` counts the connection's rare paths.
  // `first_request_id`: the client's requests so far, when it had backends
  // before: a coordinator drops a request id it saw from the same address
  // (a duplicate), and a late answer to an old one must find no one.
  // `auth`: the node's authentication (null: none), which must outlive
  // this backend and any setup it runs through it (AuthService::EnsureReady).
  SimCqlBackend(::charybdis::sim::Cluster& cluster, NodeId client, NodeId node, Probes* probes,
                uint64_t first_request_id = 0, cql::AuthService* auth = nullptr);
  ~SimCqlBackend() override;
  SimCqlBackend(const SimCqlBackend&) = delete;
  SimCqlBackend& operator=(const SimCqlBackend&) = delete;

  void Execute(ClientRequest request, std::function<void(ClientResponse)> done) override;
  const cql::ClusterView& Cluster() override { return view_; }
  // REQUIRES: the node is running.
  std::shared_ptr<const cql::Schema> CurrentSchema() override;
  Probes* probes() override { return probes_; }
  // Runs `task` as an event of the client's, at the same simulated time.
  void Post(std::function<void()> task) override;
  Nanos Now() override;
  // The node's simulated clock, and a stream seeded by the client and node.
  const cql::FunctionSources& functions() override { return functions_; }
  cql::AuthService* auth() override { return auth_; }
  Buggify& buggify() override;

  NodeId node() const { return node_; }
  uint64_t last_request_id() const { return last_request_; }

 private:
  ::charybdis::sim::Cluster& cluster_;
  const NodeId client_;
  const NodeId node_;
  Probes* const probes_;
  cql::AuthService* const auth_;
  uint64_t last_request_ = 0;
  std::map<uint64_t, std::function<void(ClientResponse)>> waiting_;
  cql::ClusterView view_;
  Random random_;
  cql::FunctionSources functions_;
};

}  // namespace charybdis::sim
