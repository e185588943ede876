#pragma once

// A simulated 4-node cluster (RF 3, a rack per node) for tests of topology
// operations: requests to any node, the stages of node 4's decommission,
// and the keys it moves; or another scenario's (a new node beside three).

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "core/data/token.h"
#include "core/topology/placement.h"
#include "core/topology/topology_log.h"
#include "sim/cluster.h"
#include "tests/scenario_text.h"

namespace charybdis::sim {

inline std::string FourNodes(const std::string& extra) {
  return absl::StrReplaceAll(testing::BaseScenario("schema { table { name: \"t\" column: \"a\" } } " + extra),
                             {{"rack { name: \"r3\" nodes: 1 }", "rack { name: \"r3\" nodes: 1 } rack { name: \"r4\" nodes: 1 }"}});
}

// Nodes 1, 2 and 3 on racks r1, r2 and r3; node 4, new, on a rack of its
// own (it then takes ranges from every member), or beside node 1 (it
// takes ranges from node 1 only: NetworkTopologyStrategy keeps one
// replica per rack).
// `extra`: more of the scenario (a replace operation makes node 4 a
// replacement; the test runs no workload).
inline std::string ThreeNodesAndANewOne(bool beside_node_1, const std::string& extra = "") {
  // Hints would bring node 4 what it missed: only streaming may.
  const std::string base = testing::BaseScenario(
      "schema { table { name: \"t\" column: \"a\" } } coordinator { disable_hinted_handoff: true } " + extra);
  if (beside_node_1) {
    return absl::StrReplaceAll(base, {{"rack { name: \"r1\" nodes: 1 }", "rack { name: \"r1\" nodes: 1 new_nodes: 1 }"}});
  }
  return absl::StrReplaceAll(base, {{"rack { name: \"r3\" nodes: 1 }", "rack { name: \"r3\" nodes: 1 } rack { name: \"r4\" new_nodes: 1 }"}});
}

class FourNodeTest : public ::testing::Test {
 protected:
  explicit FourNodeTest(const std::string& extra = "") : FourNodeTest(Scenario{FourNodes(extra)}) {}
  // Another scenario's cluster (tests/join_test: three members and a new node).
  struct Scenario {
    std::string text;
  };
  explicit FourNodeTest(const Scenario& scenario)
      : scenario_(testing::MustParse(scenario.text)),
        buggify_(false, Random(1)),
        cluster_(simulator_, scenario_, Random(11), buggify_),
        client_(cluster_.AddClient(0)) {
    cluster_.network().SetReceiver(Address{client_, 0}, [this](const Envelope& message) {
      if (message.has_client_response()) {
        answers_[message.client_response().request_id()] = message.client_response();
      } else {
        others_.push_back(message);
      }
    });
    cluster_.StartAll();
    RunFor(500 * kMillisecond);
  }

  void RunFor(Nanos time) { simulator_.RunUntil(simulator_.now() + time); }
  // Runs until `done` holds, for `limit` at most; whether it held.
  bool RunUntil(const std::function<bool()>& done, Nanos limit) {
    for (Nanos waited = 0; waited < limit && !done(); waited += 10 * kMillisecond) RunFor(10 * kMillisecond);
    return done();
  }

  // Sends to `node`'s shard that owns `key` (shard 0 for a topology
  // change) and waits up to 6 s for the answer, in steps of `step`.
  ClientResponse Call(ClientRequest request, const std::string& key, NodeId node = 1, Nanos step = 10 * kMillisecond) {
    request.set_request_id(++sent_);
    const ShardId shard = request.has_topology_change() ? 0 : ShardOf(TokenOf(key), 2);
    Envelope message;
    *message.mutable_client_request() = std::move(request);
    cluster_.network().Send(Address{client_, 0}, Address{node, shard}, std::move(message));
    const uint64_t id = sent_;
    for (Nanos waited = 0; waited < 6 * kSecond && !answers_.count(id); waited += step) RunFor(step);
    EXPECT_TRUE(answers_.count(id)) << "no answer";
    return answers_[id];
  }

  static topology::Entry Decommission4(topology::Entry::Kind kind, NodeId driver = 0) {
    topology::Entry entry;
    entry.kind = kind;
    entry.operation = topology::Operation::kDecommission;
    entry.node = 4;
    entry.driver = driver;
    return entry;
  }
  static ClientRequest ChangeRequest(const topology::Entry& entry) {
    ClientRequest request;
    for (const auto& [column, value] : topology::EntryColumns(entry)) {
      (*request.mutable_topology_change()->mutable_entry())[column] = value;
    }
    return request;
  }

  // Appends a step of node 4's decommission, which no node drives, and
  // lets every node hear of it.
  void Step(topology::Entry::Kind kind) {
    const ClientResponse answer = Call(ChangeRequest(Decommission4(kind)), "");
    ASSERT_EQ(answer.code(), ClientResponse::OK) << answer.message();
    RunFor(1000 * kMillisecond);
    for (NodeId node = 1; node <= 4; node++) {
      if (!cluster_.node(node).running()) continue;
      ASSERT_EQ(cluster_.node(node).TopologyLog(1).topology().version(), answer.topology_version()) << node;
    }
  }

  const topology::Member* Node4SeenBy(NodeId observer) {
    return cluster_.node(observer).TopologyLog().topology().Find(4);
  }
  bool Node4Normal() {
    const topology::Member* member = Node4SeenBy(1);
    return member != nullptr && member->state == topology::NodeState::kNormal;
  }

  // A key node 4 replicates now, and the node that takes it over.
  struct Moving {
    std::string key;
    std::vector<NodeId> natural;
    NodeId pending = 0;
  };
  Moving KeyThatMoves() { return KeyThatMovesIn(cluster_.node(1).TopologyLog().topology()); }
  // The same in `topology`, which has an operation in progress.
  Moving KeyThatMovesIn(const topology::Topology& topology) {
    const topology::Placement placement(topology, cluster_.ring()->layout().replication, 2);
    for (int i = 0;; i++) {
      const std::string key = "k" + std::to_string(i);
      const topology::Placement::Replicas replicas = placement.WriteReplicasOf(TokenOf(key));
      if (replicas.pending.empty()) continue;
      EXPECT_EQ(replicas.pending.size(), 1u);
      return Moving{key, replicas.natural, replicas.pending.front()};
    }
  }

  // Crashes (or restarts) the owners now other than node 4, those that stay
  // owners after its decommission, and waits for the others to see it.
  void SetStayingOwnersDown(const Moving& moving, bool down) {
    for (NodeId node : moving.natural) {
      if (node == 4) continue;
      if (down) {
        cluster_.Crash(node);
      } else {
        cluster_.Restart(node);
      }
    }
    RunFor(1500 * kMillisecond);
  }

  Simulator simulator_;
  LoadedScenario scenario_;
  SimBuggify buggify_;
  Cluster cluster_;
  NodeId client_;
  uint64_t sent_ = 0;
  std::map<uint64_t, ClientResponse> answers_;
  std::vector<Envelope> others_;  // what else reached the client: replica answers
};

}  // namespace charybdis::sim
