#include "sim/node_clock.h"

#include <gtest/gtest.h>

namespace charybdis::sim {
namespace {

TEST(NodeClockTest, OffsetAndDrift) {
  NodeClock clock(5 * kMillisecond, 100);  // 100 ppm fast
  EXPECT_EQ(clock.Local(0), 5 * kMillisecond);
  EXPECT_EQ(clock.Local(kSecond), kSecond + 100 * kMicrosecond + 5 * kMillisecond);
  clock.Adjust(0, -10 * kMillisecond, 100);
  EXPECT_EQ(clock.Local(0), -5 * kMillisecond);
}

TEST(NodeClockTest, AWindowReadsWhatTheClockReadBeforeAndAfterItsSteps) {
  NodeClock clock(0, 0);
  clock.Adjust(2 * kSecond, kSecond, 0);        // one second ahead from t = 2 s
  clock.Adjust(3 * kSecond, -2 * kSecond, 0);  // then one behind from t = 3 s
  // Today's setting alone would say [0 s, 3 s] for [1 s, 4 s].
  const NodeClock::Range range = clock.Over(kSecond, 4 * kSecond);
  EXPECT_EQ(range.earliest, kSecond);
  EXPECT_EQ(range.latest, 4 * kSecond);  // just before the step back
  const NodeClock::Range after = clock.Over(3 * kSecond + kMillisecond, 4 * kSecond);
  EXPECT_EQ(after.earliest, 2 * kSecond + kMillisecond);
  EXPECT_EQ(after.latest, 3 * kSecond);
  const NodeClock::Range before = clock.Over(kSecond / 2, kSecond);
  EXPECT_EQ(before.earliest, kSecond / 2);
  EXPECT_EQ(before.latest, kSecond);
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
