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

}  // namespace
}  // namespace charybdis
