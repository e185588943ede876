// Trace ids (core/telemetry/tracing.h): each coordinator's are its own.

#include "core/telemetry/tracing.h"

#include <gtest/gtest.h>

#include <set>

#include "core/paxos/ballot.h"
#include "tests/fake_env.h"

namespace charybdis {
namespace {

// Node and shard in the high bits: two coordinators never draw the same
// id, at any node id and shard count a valid cluster may have (the
// ballot's limits bound both).
TEST(TracerTest, IdsOfDifferentCoordinatorsNeverMeet) {
  testing::ManualClock clock;
  std::set<uint64_t> ids;
  size_t drawn = 0;
  for (NodeId node : {1u, 2u, 3u, BallotLayout::kMaxNodeId}) {
    for (ShardId shard : {0u, 1u, 127u, 128u, BallotLayout::kMaxShards - 1}) {
      Tracer tracer(Address{node, shard}, clock);
      for (int i = 0; i < 3; i++) {
        const uint64_t id = tracer.NewTrace();
        EXPECT_EQ(id >> 40, node);
        EXPECT_EQ((id >> 32) & 0xff, shard);
        ids.insert(id);
        drawn++;
      }
    }
  }
  EXPECT_EQ(ids.size(), drawn);
}

// A trace keeps at most kMaxEvents steps, its own and those other shards
// send back, however many come.
TEST(TracerTest, ATraceKeepsAtMostItsBoundOfSteps) {
  testing::ManualClock clock;
  Tracer tracer(Address{1, 0}, clock);
  const uint64_t trace = tracer.NewTrace();
  google::protobuf::RepeatedPtrField<TraceEvent> sent_back;
  for (size_t i = 0; i < Tracer::kMaxEvents - 1; i++) sent_back.Add()->set_what("step");
  tracer.Add(trace, sent_back);
  tracer.Add(trace, sent_back);
  EXPECT_EQ(tracer.Take(trace).size(), Tracer::kMaxEvents);
  const uint64_t recorded = tracer.NewTrace();
  for (size_t i = 0; i < Tracer::kMaxEvents + 5; i++) tracer.Record(recorded, "step");
  EXPECT_EQ(tracer.Take(recorded).size(), Tracer::kMaxEvents);
}

}  // namespace
}  // namespace charybdis
