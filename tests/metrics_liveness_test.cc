#include <gtest/gtest.h>

#include <limits>

#include "core/cluster/liveness.h"
#include "core/telemetry/metrics.h"
#include "core/env/random.h"

namespace charybdis {
namespace {

TEST(HistogramTest, PercentilesAreWithinABucketOfTheTruth) {
  Histogram histogram;
  EXPECT_EQ(histogram.Percentile(50), 0);
  for (int64_t v = 1; v <= 10'000; v++) histogram.Record(v);
  EXPECT_EQ(histogram.count(), 10'000u);
  EXPECT_EQ(histogram.sum(), 50'005'000);
  const int64_t p50 = histogram.Percentile(50);
  const int64_t p99 = histogram.Percentile(99);
  EXPECT_GE(p50, 5'000);
  EXPECT_LE(p50, 5'000 * 1.07);
  EXPECT_GE(p99, 9'900);
  EXPECT_LE(p99, 9'900 * 1.07);
  EXPECT_GE(histogram.Percentile(100), 10'000);
}

TEST(HistogramTest, MergeAddsCounts) {
  Histogram a, b;
  a.Record(10);
  b.Record(1000);
  b.Record(1000);
  a.Merge(b);
  EXPECT_EQ(a.count(), 3u);
  EXPECT_EQ(a.sum(), 2010);
  EXPECT_GE(a.Percentile(50), 1000);
}

// The largest value lands in the last bucket, not past it.
TEST(HistogramTest, TheLargestValueIsCountedInTheLastBucket) {
  Histogram histogram;
  histogram.Record(std::numeric_limits<int64_t>::max());
  histogram.Record(1);
  EXPECT_EQ(histogram.count(), 2u);
  EXPECT_EQ(histogram.Percentile(50), 1);
  EXPECT_GE(histogram.Percentile(100), std::numeric_limits<int64_t>::max() / 2);
}

TEST(HistogramTest, SmallValuesAreExact) {
  Histogram histogram;
  for (int64_t v : {0, 3, 3, 7, 15}) histogram.Record(v);
  EXPECT_EQ(histogram.Percentile(20), 0);
  EXPECT_EQ(histogram.Percentile(60), 3);
  EXPECT_EQ(histogram.Percentile(100), 15);
}

TEST(ShardMetricsTest, CountersHaveScyllaNames) {
  ShardMetrics metrics;
  metrics.hints_written = 3;
  bool found = false;
  for (const auto& [name, value] : metrics.Counters()) {
    if (name == "hints_written") found = value == 3;
  }
  EXPECT_TRUE(found);
}

// A shard that did nothing reports nothing: every counter starts at 0
// (a counter off by one from the start misleads every reading of it).
TEST(ShardMetricsTest, EveryCounterStartsAtZero) {
  const ShardMetrics metrics;
  for (const auto& [name, value] : metrics.Counters()) EXPECT_EQ(value, 0u) << name;
  for (const auto& [name, histogram] : metrics.Histograms()) EXPECT_EQ(histogram->count(), 0u) << name;
}

TEST(LivenessViewTest, ReportsNodesThatCameUpAndHowLongOthersAreDown) {
  LivenessView view(-50);
  EXPECT_EQ(view.DownFor(1, 0), 50);  // never seen: down since the view began
  EXPECT_EQ(view.Update({1, 2, 3}, 0), (std::vector<NodeId>{1, 2, 3}));
  EXPECT_TRUE(view.IsUp(2));
  EXPECT_TRUE(view.Update({1, 3}, 100).empty());
  EXPECT_FALSE(view.IsUp(2));
  EXPECT_EQ(view.DownFor(2, 350), 250);
  EXPECT_EQ(view.DownFor(1, 350), 0);
  EXPECT_EQ(view.Update({1, 2, 3}, 400), (std::vector<NodeId>{2}));
  EXPECT_EQ(view.UpNodes(), (std::vector<NodeId>{1, 2, 3}));
  EXPECT_FALSE(view.IsUp(9));
}

}  // namespace
}  // namespace charybdis
