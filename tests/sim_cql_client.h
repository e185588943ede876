#pragma once

// A simulated driver connection for tests: core/cql's connection over the
// simulator's network to one node (sim/cql_backend.h).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/cql/auth_service.h"
#include "core/cql/connection.h"
#include "sim/cluster.h"
#include "sim/cql_backend.h"
#include "sim/cql_frames.h"
#include "tests/fake_env.h"

namespace charybdis::sim {

// One driver connection to one node.
class SimCqlClient {
 public:
  // `auth`: the node's authentication (null: none).
  SimCqlClient(Simulator& simulator, ::charybdis::sim::Cluster& cluster, NodeId node,
               cql::AuthService* auth = nullptr, const std::string& peer = "client")
      : simulator_(simulator),
        backend_(cluster, cluster.AddClient(0), node, &counted_, 0, auth),
        connection_(prepared_, backend_, cql::ShardInfo{}, peer, [this](std::string frame) {
          answers_.push_back(frame);
        }) {}

  // Hands a frame in without running the simulation; false: the
  // connection must be closed (a protocol error).
  bool Offer(cql::Opcode opcode, const std::string& body) {
    cql::FrameHeader header;
    header.opcode = static_cast<uint8_t>(opcode);
    return connection_.OnFrame(header, body);
  }
  void Submit(cql::Opcode opcode, const std::string& body) { EXPECT_TRUE(Offer(opcode, body)); }

  // One frame in, the simulation run until its answer is out (or 10 s).
  std::string Send(cql::Opcode opcode, const std::string& body) {
    const size_t before = answers_.size();
    Submit(opcode, body);
    for (int i = 0; i < 1000 && answers_.size() == before; i++) simulator_.RunUntil(simulator_.now() + 10 * kMillisecond);
    EXPECT_EQ(answers_.size(), before + 1) << "no answer";
    return answers_.size() > before ? answers_.back().substr(cql::kHeaderBytes) : "";
  }

  std::string Query(const std::string& text, ConsistencyLevel level = CL_QUORUM) {
    return Send(cql::Opcode::kQuery, QueryBody(text, level));
  }

  void Startup() { Send(cql::Opcode::kStartup, StartupBody()); }

  const std::vector<std::string>& answers() const { return answers_; }
  // How often the connection reached `probe`.
  int Reached(const std::string& probe) { return counted_.reached[probe]; }

 private:
  Simulator& simulator_;
  ::charybdis::testing::CountingProbes counted_;
  SimCqlBackend backend_;
  cql::PreparedStatements prepared_;
  std::vector<std::string> answers_;
  cql::Connection connection_;
};

}  // namespace charybdis::sim
