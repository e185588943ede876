// Reading a machine's latencies out of request timelines (node/ctl/calibrate).

#include "node/ctl/calibrate.h"

#include <gtest/gtest.h>

namespace charybdis::node {
namespace {

void Step(ClientResponse& response, int64_t at_us, uint32_t node, const std::string& what) {
  TraceEvent* step = response.add_trace();
  step->set_at_us(at_us);
  step->set_node(node);
  step->set_shard(0);
  step->set_what(what);
}

TEST(CalibrateTest, HopsSyncsAndReadsComeOutOfATimeline) {
  ClientResponse traced;
  // Out of order on purpose: steps arrive in the order acks came back.
  Step(traced, 1200, 2, "write durable");
  Step(traced, 0, 1, "received client_request from 4294967295/0");
  Step(traced, 10, 1, "sent replica_write to 2/0");
  Step(traced, 12, 1, "sent replica_write to 1/0");
  Step(traced, 20, 1, "received replica_write from 1/0");
  Step(traced, 25, 1, "synced write issued");
  Step(traced, 300, 2, "received replica_write from 1/0");
  Step(traced, 310, 2, "synced write issued");
  Step(traced, 1000, 1, "write durable");
  Step(traced, 1210, 2, "sent replica_write_ack to 1/0");
  Step(traced, 1500, 1, "received replica_write_ack from 2/0");
  Step(traced, 1600, 1, "sent client_response to 4294967295/0");  // the client is not traced
  HopSamples samples;
  CollectHops(traced, samples);
  EXPECT_EQ(samples.between_nodes, (std::vector<int64_t>{290, 290}));
  EXPECT_EQ(samples.within_node, (std::vector<int64_t>{8}));
  EXPECT_EQ(samples.sync, (std::vector<int64_t>{975, 890}));
  EXPECT_TRUE(samples.read.empty());
}

TEST(CalibrateTest, ALatencyIsItsFifthPercentileAndAJitterThatKeepsItsMedian) {
  std::vector<int64_t> samples;
  for (int64_t i = 100; i >= 1; i--) samples.push_back(i);
  const scenario::Latency latency = FitLatency(samples);
  EXPECT_EQ(latency.min_us(), 6u);
  EXPECT_EQ(latency.jitter_mean_us(), 64u);  // (51 - 6) / ln 2
  EXPECT_EQ(FitLatency({}).min_us(), 0u);
}

TEST(CalibrateTest, TheProfileFillsTheScenarioLatencies) {
  HopSamples samples;
  samples.between_nodes = {100, 200};
  samples.within_node = {10};
  samples.sync = {500};
  samples.read = {50};
  const scenario::Scenario profile = ProfileOf(samples);
  EXPECT_EQ(profile.network().intra_dc().min_us(), 100u);
  EXPECT_EQ(profile.network().intra_dc().jitter_mean_us(), 144u);  // (200 - 100) / ln 2
  EXPECT_EQ(profile.network().intra_node().min_us(), 10u);
  EXPECT_EQ(profile.storage().sync().min_us(), 500u);
  EXPECT_EQ(profile.storage().read().min_us(), 50u);
  EXPECT_EQ(profile.storage().write().min_us(), 1u);
}

TEST(CalibrateTest, AClientCostsWhatItsRoundTripTookBeyondTheTimelineAndTwoHops) {
  ClientResponse traced;
  Step(traced, 1600, 1, "sent client_response to 4294967295/0");
  Step(traced, 100, 1, "received client_request from 4294967295/0");
  HopSamples samples;
  CollectClientCost(traced, 1900, samples);
  CollectClientCost(ClientResponse(), 5000, samples);  // no timeline: nothing to learn
  EXPECT_EQ(samples.client, (std::vector<int64_t>{400}));
  samples.between_nodes = {100, 100, 100};
  samples.sync = {500};
  samples.client_cores = 2;
  const scenario::Scenario profile = ProfileOf(samples);
  EXPECT_EQ(profile.client_machine().request().min_us(), 200u);  // 400 less two hops of 100
  EXPECT_EQ(profile.client_machine().cores(), 2u);
  EXPECT_FALSE(profile.client_machine().has_core_us());  // no bursts
  // 5 requests on 2 cores: the last left 2 shares after the first.
  CollectBurst({1000, 1100, 1050, 1180, 1200}, samples);
  CollectBurst({1000, 1001}, samples);  // as many as cores: nothing to learn
  CollectBurst({0, 60, 100, 160, 300}, samples);
  CollectBurst({0, 10, 20, 30, 40}, samples);
  EXPECT_EQ(samples.send_spacing_us, (std::vector<int64_t>{100, 150, 20}));
  EXPECT_EQ(ProfileOf(samples).client_machine().core_us(), 100u);  // the median
  // Without client samples the profile leaves the client machine free.
  samples.client.clear();
  EXPECT_FALSE(ProfileOf(samples).has_client_machine());
}

}  // namespace
}  // namespace charybdis::node
