#pragma once

// What the internode transport's tests share: sockets on free loopback
// ports, and a test node of two shard threads with its transport.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <poll.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "node/server/shard_thread.h"
#include "node/server/transport.h"

namespace charybdis::node {

inline Envelope Ping(uint64_t sequence, size_t payload_bytes = 0) {
  Envelope message;
  message.mutable_ping()->set_request_id(sequence);
  message.mutable_ping()->set_payload(std::string(payload_bytes, 'p'));
  return message;
}

// A listening socket on a free loopback port, and its "127.0.0.1:port".
inline int ListenAnywhere(std::string& address) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  sockaddr_in bound{};
  bound.sin_family = AF_INET;
  bound.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&bound), sizeof(bound)), 0);
  EXPECT_EQ(listen(fd, 16), 0);
  socklen_t length = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length);
  address = "127.0.0.1:" + std::to_string(ntohs(bound.sin_port));
  return fd;
}

// A port nobody listens on now (a node of the test takes it next).
inline std::string FreeAddress() {
  std::string address;
  close(ListenAnywhere(address));
  return address;
}

// A plain client socket connected to `address`.
inline int ConnectTo(const std::string& address) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in peer{};
  peer.sin_family = AF_INET;
  peer.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(address.rfind(':') + 1))));
  peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&peer), sizeof(peer)), 0);
  return fd;
}

// Whether the peer closes `fd` within 5 s (reading whatever it sends).
inline bool ClosedByPeer(int fd) {
  pollfd watched{fd, POLLIN, 0};
  char byte;
  return poll(&watched, 1, 5000) == 1 && recv(fd, &byte, 1, 0) <= 0;
}

// One side of the test: a node of two shard threads with its transport.
struct TestNode {
  TestNode(NodeId id, const std::map<NodeId, std::string>& peers, const std::string& listen,
           InternodeTls tls = {}) {
    for (int shard = 0; shard < 2; shard++) threads.push_back(std::make_unique<ShardThread>("test-shard"));
    std::vector<ShardThread*> raw;
    for (auto& thread : threads) raw.push_back(thread.get());
    transport = std::move(*Transport::Create(id, peers, raw, std::move(tls)));
    EXPECT_TRUE(transport->Listen(listen).ok());
    transport->network(1)->SetReceiver([this](const Envelope& m) {
      std::lock_guard<std::mutex> lock(mutex);
      received.push_back(m.ping().request_id());
    });
    for (auto& thread : threads) thread->Start();
  }
  ~TestNode() {
    transport->Stop();
    for (auto& thread : threads) thread->Stop();
  }
  // Sends pings first..last from shard 0 to `to`, in one turn of its loop.
  void SendFromShard0(Address to, uint64_t first, uint64_t last, size_t payload_bytes = 0) {
    Network* network = transport->network(0);
    threads[0]->Post([network, to, first, last, payload_bytes] {
      for (uint64_t i = first; i <= last; i++) network->Send(to, Ping(i, payload_bytes));
    });
  }
  std::vector<uint64_t> Received() {
    std::lock_guard<std::mutex> lock(mutex);
    return received;
  }
  // Waits up to 5 s for `count` messages.
  bool AwaitReceived(size_t count) {
    for (int i = 0; i < 500 && Received().size() < count; i++) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return Received().size() >= count;
  }

  std::vector<std::unique_ptr<ShardThread>> threads;
  std::unique_ptr<Transport> transport;
  std::mutex mutex;
  std::vector<uint64_t> received;
};

inline std::vector<uint64_t> Sequence(uint64_t first, uint64_t last) {
  std::vector<uint64_t> numbers;
  for (uint64_t i = first; i <= last; i++) numbers.push_back(i);
  return numbers;
}

}  // namespace charybdis::node
