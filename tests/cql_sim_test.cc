// CQL statements from simulated clients: core/cql's connection, over the
// simulator's network, against a simulated 3-node cluster (RF=3, two
// shards per node) whose scenario declares the CQL schema. The same code
// that serves drivers on real nodes, deterministic here.

#include <gtest/gtest.h>

#include "core/cql/connection.h"
#include "core/cql/consistency_code.h"
#include "core/token.h"
#include "sim/cluster.h"
#include "tests/scenario_text.h"

namespace charybdis::sim {
namespace {

using testing::BaseScenario;
using testing::MustParse;

constexpr char kSchema[] = R"pb(schema {
  cql: "CREATE KEYSPACE app WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3}"
  cql: "CREATE TABLE app.accounts (id text PRIMARY KEY, balance bigint, owner text)"
  cql: "CREATE TABLE app.events (stream text, seq int, note text, PRIMARY KEY (stream, seq)) WITH CLUSTERING ORDER BY (seq DESC)"
})pb";

// A simulated client's requests: each goes over the simulated network to
// node 1, on the shard that owns its partition; answers come back as
// messages to the client's address.
class SimBackend final : public cql::Backend {
 public:
  SimBackend(::charybdis::sim::Cluster& cluster, NodeId client) : cluster_(cluster), client_(client) {
    cluster_.network().SetReceiver(Address{client_, 0}, [this](const Envelope& message) {
      auto waiting = waiting_.find(message.client_response().request_id());
      if (waiting == waiting_.end()) return;
      auto done = std::move(waiting->second);
      waiting_.erase(waiting);
      done(message.client_response());
    });
  }

  void Execute(ClientRequest request, std::function<void(ClientResponse)> done) override {
    const ShardId shard = ShardOf(TokenOf(cql::PartitionKeyOf(request)), 2);
    request.set_request_id(++last_request_);
    waiting_[last_request_] = std::move(done);
    Envelope message;
    *message.mutable_client_request() = std::move(request);
    cluster_.network().Send(Address{client_, 0}, Address{1, shard}, std::move(message));
  }

  const cql::ClusterView& Cluster() override { return view_; }

 private:
  ::charybdis::sim::Cluster& cluster_;
  const NodeId client_;
  uint64_t last_request_ = 0;
  std::map<uint64_t, std::function<void(ClientResponse)>> waiting_;
  cql::ClusterView view_;
};

class CqlSimTest : public ::testing::Test {
 protected:
  CqlSimTest()
      : scenario_(MustParse(BaseScenario(kSchema))),
        buggify_(false, Random(1)),
        cluster_(simulator_, scenario_, Random(5), buggify_),
        backend_(cluster_, cluster_.AddClient(0)),
        connection_(cluster_.cql_schema(), prepared_, backend_, cql::ShardInfo{}, [this](std::string frame) {
          answers_.push_back(frame);
        }) {
    cluster_.StartAll();
    simulator_.RunUntil(500 * kMillisecond);
    cql::Writer startup;
    startup.Short(1);
    startup.String("CQL_VERSION");
    startup.String("3.0.0");
    Send(cql::Opcode::kStartup, startup.Take());
  }

  // One frame in, the simulation run until its answer is out (or 2 s).
  std::string Send(cql::Opcode opcode, const std::string& body) {
    const size_t before = answers_.size();
    cql::FrameHeader header;
    header.opcode = static_cast<uint8_t>(opcode);
    EXPECT_TRUE(connection_.OnFrame(header, body));
    for (int i = 0; i < 200 && answers_.size() == before; i++) simulator_.RunUntil(simulator_.now() + 10 * kMillisecond);
    EXPECT_EQ(answers_.size(), before + 1) << "no answer";
    return answers_.size() > before ? answers_.back().substr(cql::kHeaderBytes) : "";
  }

  std::string Query(const std::string& text, ConsistencyLevel level = CL_QUORUM) {
    cql::Writer body;
    body.LongString(text);
    body.Short(cql::ToCqlConsistency(level));
    body.Byte(0);
    return Send(cql::Opcode::kQuery, body.Take());
  }

  // The rows of a Rows result (each value as bytes, empty for null).
  static std::vector<std::vector<std::string>> Rows(const std::string& body) {
    cql::Reader in(body);
    EXPECT_EQ(in.Int(), 2) << "not a Rows result";
    const int32_t flags = in.Int();
    const int32_t columns = in.Int();
    EXPECT_EQ(flags & 0x0001, 0x0001);  // one table
    in.String();
    in.String();
    for (int32_t i = 0; i < columns; i++) {
      in.String();
      in.UnsignedShort();  // scalar types only here
    }
    std::vector<std::vector<std::string>> rows(in.Int());
    for (auto& row : rows) {
      for (int32_t i = 0; i < columns; i++) row.push_back(in.Bytes().bytes.value_or(""));
    }
    EXPECT_TRUE(in.ok() && in.AtEnd());
    return rows;
  }

  Simulator simulator_;
  LoadedScenario scenario_;
  SimBuggify buggify_;
  Cluster cluster_;
  SimBackend backend_;
  cql::PreparedStatements prepared_;
  std::vector<std::string> answers_;
  cql::Connection connection_;
};

TEST_F(CqlSimTest, StatementsRunOnTheSimulatedCluster) {
  EXPECT_EQ(cql::Reader(Query("INSERT INTO app.accounts (id, balance, owner) VALUES ('a', 10, 'ann')")).Int(), 1);
  EXPECT_EQ(Rows(Query("SELECT owner, balance FROM app.accounts WHERE id = 'a'")),
            (std::vector<std::vector<std::string>>{{"ann", cql::NativeBigint(10)}}));
  for (int seq = 1; seq <= 3; seq++) {
    Query("INSERT INTO app.events (stream, seq, note) VALUES ('s', " + std::to_string(seq) + ", 'n" + std::to_string(seq) + "')");
  }
  EXPECT_EQ(Rows(Query("SELECT note FROM app.events WHERE stream = 's' AND seq < 3")),
            (std::vector<std::vector<std::string>>{{"n2"}, {"n1"}}));  // DESC
  // A lightweight transaction through Paxos among the simulated replicas.
  EXPECT_EQ(Rows(Query("UPDATE app.accounts SET balance = 20 WHERE id = 'a' IF balance = 10")),
            (std::vector<std::vector<std::string>>{{cql::NativeBoolean(true)}}));
  const auto failed = Rows(Query("UPDATE app.accounts SET balance = 30 WHERE id = 'a' IF balance = 10"));
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0][0], cql::NativeBoolean(false));
  EXPECT_EQ(Rows(Query("SELECT balance FROM app.accounts WHERE id = 'a'", CL_SERIAL)),
            (std::vector<std::vector<std::string>>{{cql::NativeBigint(20)}}));
}

TEST_F(CqlSimTest, ANodeDownMakesAllUnavailableAndLeavesQuorum) {
  cluster_.Crash(3);
  simulator_.RunUntil(simulator_.now() + 2000 * kMillisecond);  // convicted
  EXPECT_EQ(cql::Reader(Query("INSERT INTO app.accounts (id, owner) VALUES ('b', 'bob')", CL_QUORUM)).Int(), 1);
  const std::string answer = Query("INSERT INTO app.accounts (id, owner) VALUES ('c', 'cy')", CL_ALL);
  cql::Reader error(answer);
  EXPECT_EQ(error.Int(), static_cast<int32_t>(cql::ErrorCode::kUnavailable));
  error.String();
  EXPECT_EQ(error.UnsignedShort(), cql::ToCqlConsistency(CL_ALL));
  EXPECT_EQ(error.Int(), 3);  // required
  EXPECT_EQ(error.Int(), 2);  // alive
}

}  // namespace
}  // namespace charybdis::sim
