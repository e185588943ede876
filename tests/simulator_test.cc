#include "sim/simulator.h"

#include <gtest/gtest.h>

#include <string>

namespace charybdis::sim {
namespace {

EventTag Tag(uint32_t host, EventKind kind = EventKind::kTimer) {
  return EventTag{kind, host, 0, 0};
}

void RunAll(Simulator& simulator) {
  while (!simulator.empty()) simulator.Step();
}

TEST(SimulatorTest, RunsInTimeThenScheduleOrder) {
  Simulator simulator;
  simulator.AddHost();
  std::string order;
  simulator.Schedule(20, Tag(0), true, [&] { order += "c"; });
  simulator.Schedule(10, Tag(0), true, [&] { order += "a"; });
  simulator.Schedule(10, Tag(0), true, [&] {
    order += "b";
    simulator.Schedule(simulator.now(), Tag(0), true, [&] { order += "b2"; });
  });
  RunAll(simulator);
  EXPECT_EQ(order, "abb2c");
  EXPECT_EQ(simulator.now(), 20);
  EXPECT_EQ(simulator.events_processed(), 4u);
}

TEST(SimulatorTest, CrashDropsBoundEventsButNotMessagesOnTheWire) {
  Simulator simulator;
  const uint32_t host = simulator.AddHost();
  std::string ran;
  simulator.Schedule(10, Tag(host), /*bound=*/true, [&] { ran += "timer "; });
  simulator.Schedule(10, Tag(host, EventKind::kDelivery), /*bound=*/false,
                     [&] { ran += "delivery "; });
  simulator.Crash(host);
  simulator.Schedule(20, Tag(host), /*bound=*/true, [&] { ran += "new-life-timer"; });
  RunAll(simulator);
  EXPECT_EQ(ran, "delivery new-life-timer");
}

TEST(SimulatorTest, PauseDefersInOrderAndFaultsStillRun) {
  Simulator simulator;
  const uint32_t host = simulator.AddHost();
  std::string ran;
  simulator.Pause(host);
  simulator.Schedule(10, Tag(host), true, [&] { ran += "1"; });
  simulator.Schedule(20, Tag(host), true, [&] { ran += "2"; });
  simulator.Schedule(30, Tag(host, EventKind::kFault), false, [&] {
    ran += "R";
    simulator.Resume(host);
  });
  simulator.Schedule(40, Tag(host), true, [&] { ran += "3"; });
  RunAll(simulator);
  EXPECT_EQ(ran, "R123");
  EXPECT_EQ(simulator.now(), 40);
}

TEST(SimulatorTest, RunUntilMovesTheClockEvenWithoutEvents) {
  Simulator simulator;
  simulator.AddHost();
  int ran = 0;
  simulator.Schedule(10, Tag(0), true, [&] { ran++; });
  simulator.Schedule(30, Tag(0), true, [&] { ran++; });
  simulator.RunUntil(20);
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(simulator.now(), 20);
  simulator.RunUntil(25);
  EXPECT_EQ(simulator.now(), 25);
  EXPECT_EQ(ran, 1);
}

TEST(SimulatorTest, CrashWhilePausedForgetsDeferredEvents) {
  Simulator simulator;
  const uint32_t host = simulator.AddHost();
  int ran = 0;
  simulator.Pause(host);
  simulator.Schedule(10, Tag(host), true, [&] { ran++; });
  simulator.Step();  // deferred
  simulator.Crash(host);
  EXPECT_FALSE(simulator.paused(host));
  RunAll(simulator);
  EXPECT_EQ(ran, 0);
}

uint64_t HashOf(uint64_t detail, Nanos at) {
  Simulator simulator;
  simulator.AddHost();
  simulator.Schedule(at, EventTag{EventKind::kTimer, 0, 0, detail}, true, [] {});
  RunAll(simulator);
  return simulator.trace_hash();
}

TEST(SimulatorTest, TraceHashFoldsTimeAndDetail) {
  EXPECT_EQ(HashOf(1, 5), HashOf(1, 5));
  EXPECT_NE(HashOf(1, 5), HashOf(2, 5));
  EXPECT_NE(HashOf(1, 5), HashOf(1, 6));
}

TEST(SimulatorTest, TraceFileGetsOneLinePerEvent) {
  char* buffer = nullptr;
  size_t size = 0;
  std::FILE* file = open_memstream(&buffer, &size);
  Simulator simulator;
  simulator.AddHost();
  simulator.set_trace_file(file);
  simulator.Schedule(1, Tag(0), true, [] {});
  simulator.Schedule(2, Tag(0, EventKind::kDelivery), true, [] {});
  RunAll(simulator);
  std::fclose(file);
  const std::string trace(buffer, size);
  std::free(buffer);
  EXPECT_EQ(std::count(trace.begin(), trace.end(), '\n'), 2);
  EXPECT_NE(trace.find("t=2 delivery host=0"), std::string::npos) << trace;
}

}  // namespace
}  // namespace charybdis::sim
