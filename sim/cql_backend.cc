#include "sim/cql_backend.h"

#include "core/env/assert.h"

namespace charybdis::sim {

SimCqlBackend::SimCqlBackend(::charybdis::sim::Cluster& cluster, NodeId client, NodeId node, Probes* probes,
                             uint64_t first_request_id, cql::AuthService* auth)
    : cluster_(cluster),
      client_(client),
      node_(node),
      probes_(probes),
      auth_(auth),
      last_request_(first_request_id),
      // Each of a client's backends draws apart (uuid() must not repeat).
      random_(uint64_t{client} << 40 ^ uint64_t{node} << 32 ^ first_request_id) {
  functions_.now_us = [this] { return cluster_.node(node_).clock().Local(cluster_.simulator().now()) / kMicrosecond; };
  functions_.random = [this] { return random_.Next(); };
  CHARYBDIS_ASSERT(node >= 1);
  CHARYBDIS_ASSERT(node <= cluster.size());
  CHARYBDIS_ASSERT(probes != nullptr);
  // Who the node knows of, by datacenter and rack (the bootstrap members).
  for (const NodeInfo& info : cluster_.ring()->layout().nodes) {
    cql::HostInfo& host = info.id == node_ ? view_.local : view_.peers.emplace_back();
    host.datacenter = info.datacenter;
    host.rack = info.rack;
  }
  cluster_.network().SetReceiver(Address{client_, 0}, [this](const Envelope& message) {
    CHARYBDIS_ASSERT(message.has_client_response());
    // Late (after a restart of the node) or duplicated answers find no one.
    auto waiting = waiting_.find(message.client_response().request_id());
    if (waiting == waiting_.end()) return;
    auto done = std::move(waiting->second);
    waiting_.erase(waiting);
    done(message.client_response());
  });
}

Buggify& SimCqlBackend::buggify() { return cluster_.node(node_).buggify(); }

SimCqlBackend::~SimCqlBackend() { cluster_.network().ClearReceivers(SimNetwork::HostOf(client_)); }

void SimCqlBackend::Execute(ClientRequest request, std::function<void(ClientResponse)> done) {
  const ShardId shard = cql::ShardFor(request, cluster_.topology().shards_per_node);
  request.set_request_id(++last_request_);
  waiting_[last_request_] = std::move(done);
  Envelope message;
  *message.mutable_client_request() = std::move(request);
  cluster_.network().Send(Address{client_, 0}, Address{node_, shard}, std::move(message));
}

void SimCqlBackend::Post(std::function<void()> task) {
  Simulator& simulator = cluster_.simulator();
  simulator.Schedule(simulator.now(), EventTag{EventKind::kClient, SimNetwork::HostOf(client_), 0, 0},
                     /*bound=*/false, std::move(task));
}

Nanos SimCqlBackend::Now() { return cluster_.simulator().now(); }

std::shared_ptr<const cql::Schema> SimCqlBackend::CurrentSchema() {
  CHARYBDIS_ASSERT(cluster_.node(node_).running());
  return cluster_.node(node_).Schema().schema;
}

}  // namespace charybdis::sim
