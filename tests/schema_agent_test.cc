// The schema agent (core/schema/schema_agent.h) on a simulated 3-node
// cluster: a burst of DDL fills its queue to the bound and no further;
// the change past it is refused at once, and the queued ones are decided.

#include "core/schema/schema_agent.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "sim/cluster.h"
#include "tests/scenario_text.h"

namespace charybdis::sim {
namespace {

using testing::BaseScenario;
using testing::MustParse;

class SchemaAgentTest : public ::testing::Test {
 protected:
  SchemaAgentTest()
      : scenario_(MustParse(BaseScenario())),
        buggify_(false, Random(1)),
        cluster_(simulator_, scenario_, Random(5), buggify_, nullptr),
        client_(cluster_.AddClient(0)) {
    cluster_.network().SetReceiver(Address{client_, 0}, [this](const Envelope& message) {
      if (message.has_client_response()) answers_[message.client_response().request_id()] = message.client_response();
    });
    cluster_.StartAll();
    RunFor(500 * kMillisecond);
  }

  // Sends a change to node 1's shard 0, which runs its schema agent,
  // without running the simulation.
  void Submit(uint64_t request_id, const std::string& statement) {
    Envelope message;
    message.mutable_client_request()->set_request_id(request_id);
    message.mutable_client_request()->mutable_schema_change()->set_statement(statement);
    cluster_.network().Send(Address{client_, 0}, Address{1, 0}, std::move(message));
  }
  void RunFor(Nanos time) { simulator_.RunUntil(simulator_.now() + time); }

  Simulator simulator_;
  LoadedScenario scenario_;
  SimBuggify buggify_;
  Cluster cluster_;
  NodeId client_;
  std::map<uint64_t, ClientResponse> answers_;
};

// DDL is rare; a burst past SchemaAgent's bound (1000 queued) is what an
// application looping on CREATE sends, and must not grow a node's memory
// without end. The link keeps their order and they arrive within about a
// millisecond, before the first is decided (a Paxos round and a synced
// save take longer; the first assertion fails should that change): the
// first is being decided, 999 wait behind it, and the 1001st is refused
// while the others go on.
TEST_F(SchemaAgentTest, ABurstPastTheQueuesBoundIsRefusedAndTheRestDecided) {
  constexpr uint64_t kBurst = 1001;
  const uint64_t sequence_before = cluster_.node(1).Schema().sequence;
  for (uint64_t id = 1; id <= kBurst; id++) {
    Submit(id, absl::StrCat("CREATE KEYSPACE IF NOT EXISTS ks", id,
                            " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}"));
  }
  for (int i = 0; i < 1000 && answers_.empty(); i++) RunFor(100 * kMicrosecond);
  ASSERT_EQ(answers_.size(), 1u) << "the change past the bound is answered first, at once";
  EXPECT_EQ(answers_.begin()->first, kBurst);
  EXPECT_EQ(answers_.begin()->second.code(), ClientResponse::UNAVAILABLE);
  EXPECT_EQ(answers_.begin()->second.message(), "too many schema changes are queued on this node");
  for (int i = 0; i < 600 && answers_.size() < kBurst; i++) RunFor(100 * kMillisecond);
  ASSERT_EQ(answers_.size(), kBurst);
  for (uint64_t id = 1; id < kBurst; id++) {
    EXPECT_EQ(answers_[id].code(), ClientResponse::OK) << "change " << id << ": " << answers_[id].message();
  }
  EXPECT_EQ(cluster_.node(1).Schema().sequence, sequence_before + kBurst - 1) << "each queued change is an entry";
}

}  // namespace
}  // namespace charybdis::sim
