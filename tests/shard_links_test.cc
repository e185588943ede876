// A shard's internode links (node/server/shard_links.h): the messages a turn
// queues for one peer shard leave in one socket write, and arrive whole
// and in order.
#include "node/server/shard_links.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "node/server/internode_frame.h"
#include "node/server/shard_thread.h"

namespace charybdis::node {
namespace {

// A peer node's listening socket on loopback, read by the test thread.
class Peer {
 public:
  Peer() {
    listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    address_.sin_family = AF_INET;
    address_.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address_.sin_port = 0;
    EXPECT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&address_), sizeof(address_)), 0);
    socklen_t length = sizeof(address_);
    EXPECT_EQ(getsockname(listener_, reinterpret_cast<sockaddr*>(&address_), &length), 0);
    EXPECT_EQ(listen(listener_, 1), 0);
  }
  ~Peer() {
    if (connection_ >= 0) close(connection_);
    close(listener_);
  }
  const sockaddr_in& address() const { return address_; }

  // Reads until `count` messages have come after the hello.
  std::vector<Envelope> Receive(size_t count) {
    if (connection_ < 0) connection_ = accept(listener_, nullptr, nullptr);
    std::vector<Envelope> received;
    char chunk[4096];
    while (received.size() < count) {
      const ssize_t got = read(connection_, chunk, sizeof(chunk));
      if (got <= 0) break;
      input_.append(chunk, static_cast<size_t>(got));
      if (!hello_read_) {
        if (input_.size() < kInternodeHelloBytes) continue;
        EXPECT_TRUE(DecodeHello(std::string_view(input_).substr(0, kInternodeHelloBytes)).has_value());
        input_.erase(0, kInternodeHelloBytes);
        hello_read_ = true;
      }
      EXPECT_TRUE(TakeFrames(input_, [&](const Envelope& message) { received.push_back(message); }).ok());
    }
    return received;
  }

 private:
  int listener_ = -1;
  int connection_ = -1;
  sockaddr_in address_{};
  std::string input_;
  bool hello_read_ = false;
};

Envelope Numbered(uint64_t number) {
  Envelope message;
  message.set_to_node(2);
  message.set_to_shard(0);
  message.set_trace_id(number);  // any field that tells the messages apart
  return message;
}

// Runs `fn` on the shard's thread and waits until its turn has ended.
void RunTurn(ShardThread& thread, const std::function<void()>& fn) {
  std::promise<void> ran;
  thread.Post([&] {
    fn();
    ran.set_value();
  });
  ran.get_future().wait();
  std::promise<void> next_turn;  // the turn above has flushed by then
  thread.Post([&] { next_turn.set_value(); });
  next_turn.get_future().wait();
}

class ShardLinksTest : public ::testing::Test {
 protected:
  ShardLinksTest() : links_(thread_, Address{1, 0}, {{2, peer_.address()}}, nullptr, [](const Envelope&) {}) {
    thread_.SetEndOfTurn([this] { links_.Flush(); });
    thread_.Start();
  }
  // The links close their sockets only once the thread is done with them.
  ~ShardLinksTest() override { thread_.Stop(); }

  Peer peer_;
  ShardThread thread_{"test-shard"};
  ShardLinks links_;
};

TEST_F(ShardLinksTest, ATurnsMessagesToOnePeerLeaveInOneWrite) {
  const Address to{2, 0};
  // The first message connects; once it has arrived the link is open.
  RunTurn(thread_, [&] { links_.Send(to, Numbered(0)); });
  ASSERT_EQ(peer_.Receive(1).size(), 1u);

  constexpr int kMessages = 64;
  ShardLinks::Counts before;
  RunTurn(thread_, [&] {
    before = links_.counts();
    for (int i = 1; i <= kMessages; i++) links_.Send(to, Numbered(i));
  });
  ShardLinks::Counts after;
  RunTurn(thread_, [&] { after = links_.counts(); });
  EXPECT_EQ(after.messages_sent - before.messages_sent, uint64_t{kMessages});
  EXPECT_EQ(after.socket_writes - before.socket_writes, 1u) << "one write per message would be " << kMessages;

  const std::vector<Envelope> received = peer_.Receive(kMessages);
  ASSERT_EQ(received.size(), size_t{kMessages});
  for (int i = 0; i < kMessages; i++) EXPECT_EQ(received[i].trace_id(), uint64_t(i + 1));
}

}  // namespace
}  // namespace charybdis::node
