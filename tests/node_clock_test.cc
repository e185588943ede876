#include "sim/node_clock.h"

#include <gtest/gtest.h>

namespace charybdis::sim {
namespace {

TEST(NodeClockTest, OffsetAndDrift) {
  NodeClock clock(5 * kMillisecond, 100);  // 100 ppm fast
  EXPECT_EQ(clock.Local(0), 5 * kMillisecond);
  EXPECT_EQ(clock.Local(kSecond), kSecond + 100 * kMicrosecond + 5 * kMillisecond);
  clock.Step(-10 * kMillisecond);
  EXPECT_EQ(clock.Local(0), -5 * kMillisecond);
}

TEST(NodeClockTest, TimersFollowTheClockRateAndNeverFireEarly) {
  const NodeClock fast(0, 100'000);  // 10% fast: a local second passes sooner
  EXPECT_EQ(fast.TrueDelay(11 * kMillisecond), 10 * kMillisecond);
  const NodeClock slow(0, -100'000);
  const Nanos delay = slow.TrueDelay(9 * kMillisecond);
  EXPECT_EQ(delay, 10 * kMillisecond);
  for (Nanos local : {Nanos{1}, Nanos{7}, Nanos{999'999}}) {
    const NodeClock odd(0, 333);
    EXPECT_GE(odd.Local(odd.TrueDelay(local)), local);
  }
}

}  // namespace
}  // namespace charybdis::sim
