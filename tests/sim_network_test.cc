#include "sim/sim_network.h"

#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <vector>

namespace charybdis::sim {
namespace {

scenario::Latency Latency(uint64_t min_us, uint64_t jitter_us) {
  scenario::Latency latency;
  latency.set_min_us(min_us);
  latency.set_jitter_mean_us(jitter_us);
  return latency;
}

// Two datacenters: hosts 0 and 1 in dc 0, host 2 in dc 1.
class SimNetworkTest : public ::testing::Test {
 protected:
  explicit SimNetworkTest(bool wire = false)
      : network_(simulator_, Random(1),
                 {{Latency(100, 0), Latency(10'000, 0)}, {Latency(10'000, 0), Latency(100, 0)}},
                 Latency(1, 0), wire) {
    for (uint32_t dc : {0u, 0u, 1u}) {
      simulator_.AddHost();
      network_.AddHost(dc, 2);
    }
    for (NodeId node = 1; node <= 3; node++) {
      for (ShardId shard = 0; shard < 2; shard++) {
        network_.SetReceiver(Address{node, shard}, [this, node, shard](const Envelope& message) {
          received_.push_back({Address{node, shard}, message, simulator_.now()});
        });
      }
    }
  }

  void Ping(NodeId from, NodeId to, uint64_t id = 1) {
    Envelope message;
    message.mutable_ping()->set_request_id(id);
    message.mutable_ping()->set_payload("hello");
    network_.Send(Address{from, 0}, Address{to, 1}, std::move(message));
  }
  void RunAll() {
    while (!simulator_.empty()) simulator_.Step();
  }

  struct Received {
    Address at;
    Envelope message;
    Nanos time;
  };
  Simulator simulator_;
  SimNetwork network_;
  std::vector<Received> received_;
};

TEST_F(SimNetworkTest, LatencyDependsOnTheDatacenterPair) {
  Ping(1, 2);
  Ping(1, 3);
  Ping(1, 1);
  RunAll();
  ASSERT_EQ(received_.size(), 3u);
  EXPECT_EQ(received_[0].time, 1 * kMicrosecond);  // same node, other shard
  EXPECT_EQ(received_[1].time, 100 * kMicrosecond);
  EXPECT_EQ(received_[2].time, 10 * kMillisecond);
  EXPECT_EQ(received_[1].message.from_node(), 1u);
  EXPECT_EQ(received_[1].message.to_shard(), 1u);
  EXPECT_EQ(received_[1].at, (Address{2, 1}));
}

TEST_F(SimNetworkTest, OneWayPartitionBlocksOnlyOneDirection) {
  network_.Block(0, 1);
  Ping(1, 2);
  Ping(2, 1);
  RunAll();
  ASSERT_EQ(received_.size(), 1u);
  EXPECT_EQ(received_[0].message.from_node(), 2u);
  network_.HealPartitions();
  Ping(1, 2);
  RunAll();
  EXPECT_EQ(received_.size(), 2u);
}

TEST_F(SimNetworkTest, LossAndDuplication) {
  network_.set_faults(MessageFaults{1.0, 0, 0});
  Ping(1, 2);
  Ping(1, 1);  // a node's shards talk without loss
  RunAll();
  EXPECT_EQ(received_.size(), 1u);
  EXPECT_EQ(network_.stats().lost, 1u);
  network_.set_faults(MessageFaults{0, 1.0, 0});
  Ping(1, 3);
  RunAll();
  EXPECT_EQ(received_.size(), 3u);
}

TEST_F(SimNetworkTest, ReorderLetsLaterMessagesOvertake) {
  network_.set_faults(MessageFaults{0, 0, 0.5});
  for (uint64_t id = 1; id <= 200; id++) Ping(1, 2, id);
  RunAll();
  ASSERT_EQ(received_.size(), 200u);
  int overtaken = 0;
  for (size_t i = 1; i < received_.size(); i++) {
    overtaken += received_[i].message.ping().request_id() < received_[i - 1].message.ping().request_id();
  }
  EXPECT_GT(overtaken, 0);
}

// Jittery links: each delivers in the order it was sent (as a stream and
// a shard's queue do), while links do not wait for each other.
TEST(SimNetworkOrderTest, EachLinkDeliversInOrderAndLinksAreIndependent) {
  Simulator simulator;
  SimNetwork network(simulator, Random(7), {{Latency(100, 500)}}, Latency(1, 50), false);
  for (int host = 0; host < 2; host++) {
    simulator.AddHost();
    network.AddHost(0, 2);
  }
  std::vector<std::pair<Address, uint64_t>> received;  // (link's source, id)
  for (ShardId shard = 0; shard < 2; shard++) {
    network.SetReceiver(Address{2, shard}, [&received](const Envelope& message) {
      received.push_back({Address{message.from_node(), message.from_shard()}, message.ping().request_id()});
    });
  }
  // Two links into node 2 shard 0: from node 1 shard 0, and from node 2
  // shard 1 (within the node); 100 messages on each, sent in turns.
  for (uint64_t id = 1; id <= 100; id++) {
    for (const Address from : {Address{1, 0}, Address{2, 1}}) {
      Envelope message;
      message.mutable_ping()->set_request_id(id);
      network.Send(from, Address{2, 0}, std::move(message));
    }
    if (id % 10 == 0) simulator.Step();
  }
  while (!simulator.empty()) simulator.Step();
  ASSERT_EQ(received.size(), 200u);
  std::map<Address, uint64_t> last_id;
  bool links_interleaved_out_of_send_order = false;
  for (size_t i = 0; i < received.size(); i++) {
    const auto& [from, id] = received[i];
    EXPECT_EQ(id, last_id[from] + 1) << "on the link from " << from.ToString();
    last_id[from] = id;
    if (i > 0 && received[i - 1].second > id + 1) links_interleaved_out_of_send_order = true;
  }
  // The node's own link is faster: its later messages pass the other's.
  EXPECT_TRUE(links_interleaved_out_of_send_order);
}

TEST_F(SimNetworkTest, ClogHoldsMessagesUntilItEnds) {
  network_.Clog(1, 5 * kMillisecond);
  Ping(1, 2);
  Ping(1, 3);
  RunAll();
  ASSERT_EQ(received_.size(), 2u);
  EXPECT_EQ(received_[0].time, 5 * kMillisecond + 100 * kMicrosecond);
  EXPECT_EQ(received_[1].time, 10 * kMillisecond);
}

TEST_F(SimNetworkTest, MessagesToADownHostAreUndeliverable) {
  network_.ClearReceivers(1);
  Ping(1, 2);
  RunAll();
  EXPECT_TRUE(received_.empty());
  EXPECT_EQ(network_.stats().undeliverable, 1u);
}

class WireRoundTripTest : public SimNetworkTest {
 protected:
  WireRoundTripTest() : SimNetworkTest(/*wire=*/true) {}
};

TEST_F(WireRoundTripTest, MessagesSurviveSerialisation) {
  Ping(1, 3, 77);
  RunAll();
  ASSERT_EQ(received_.size(), 1u);
  EXPECT_EQ(received_[0].message.ping().request_id(), 77u);
  EXPECT_EQ(received_[0].message.ping().payload(), "hello");
  EXPECT_EQ(received_[0].message.from_node(), 1u);
}

}  // namespace
}  // namespace charybdis::sim
