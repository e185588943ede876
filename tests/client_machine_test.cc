// The simulated client machine (sim/client_machine.h): requests released
// together leave one core's worth at a time.
#include "sim/client_machine.h"

#include <vector>

#include "gtest/gtest.h"

namespace charybdis::sim {
namespace {

scenario::ClientMachine TwoCores(uint64_t request_us) {
  scenario::ClientMachine spec;
  spec.mutable_request()->set_min_us(request_us);
  spec.mutable_request()->set_jitter_mean_us(0);
  spec.set_cores(2);
  return spec;
}

TEST(ClientMachineTest, RequestsReleasedTogetherShareTheCores) {
  ClientMachine machine(TwoCores(100));
  Random random(1);
  ASSERT_TRUE(machine.modelled());
  EXPECT_EQ(machine.SendTime(0, random), 100 * kMicrosecond);
  EXPECT_EQ(machine.SendTime(0, random), 100 * kMicrosecond);
  EXPECT_EQ(machine.SendTime(0, random), 200 * kMicrosecond);
  EXPECT_EQ(machine.SendTime(0, random), 200 * kMicrosecond);
  EXPECT_EQ(machine.SendTime(0, random), 300 * kMicrosecond);
  // An idle machine sends a request one cost after it starts.
  EXPECT_EQ(machine.SendTime(1000 * kMicrosecond, random), 1100 * kMicrosecond);
}

TEST(ClientMachineTest, OnlyTheCoreShareOfACostIsTakenInTurn) {
  scenario::ClientMachine spec = TwoCores(300);
  spec.set_core_us(50);
  ClientMachine machine(spec);
  Random random(1);
  // Released together: the waiting overlaps, the core shares queue.
  std::vector<Nanos> sent;
  for (int i = 0; i < 16; i++) sent.push_back(machine.SendTime(0, random));
  EXPECT_EQ(sent.front(), 300 * kMicrosecond);
  EXPECT_EQ(sent[11], 300 * kMicrosecond);  // its core was done at 300
  EXPECT_EQ(sent[12], 350 * kMicrosecond);
  EXPECT_EQ(sent.back(), 400 * kMicrosecond);  // 8 shares of 50 on each core
  // A share above the whole cost is what holds the request.
  spec.set_core_us(500);
  ClientMachine cpu_bound(spec);
  EXPECT_EQ(cpu_bound.SendTime(0, random), 500 * kMicrosecond);
}

TEST(ClientMachineTest, UnsetCostsNothingAndZeroCoresIsOne) {
  EXPECT_FALSE(ClientMachine(scenario::ClientMachine()).modelled());
  scenario::ClientMachine spec = TwoCores(50);
  spec.set_cores(0);
  ClientMachine machine(spec);
  Random random(1);
  EXPECT_EQ(machine.SendTime(0, random), 50 * kMicrosecond);
  EXPECT_EQ(machine.SendTime(0, random), 100 * kMicrosecond);
}

}  // namespace
}  // namespace charybdis::sim
