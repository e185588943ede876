// The shard reactor's turn (node/server/shard_thread.h): what the thread posts
// itself runs in the same turn, after the turn's socket writes, and never
// starves its sockets.
#include "node/server/shard_thread.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <future>
#include <mutex>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace charybdis::node {
namespace {

// A pipe whose read end the shard watches: readable once a byte is in.
class WatchedPipe {
 public:
  WatchedPipe() {
    int fds[2];
    EXPECT_EQ(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
    read_ = fds[0];
    write_ = fds[1];
  }
  ~WatchedPipe() {
    close(read_);
    close(write_);
  }
  int read_end() const { return read_; }
  void MakeReadable() { EXPECT_EQ(write(write_, "x", 1), 1); }
  void Drain() {
    char byte;
    while (read(read_, &byte, 1) == 1) {
    }
  }

 private:
  int read_ = -1;
  int write_ = -1;
};

class Steps {
 public:
  void Add(const std::string& step) {
    std::lock_guard<std::mutex> lock(mutex_);
    steps_.push_back(step);
  }
  std::vector<std::string> Get() {
    std::lock_guard<std::mutex> lock(mutex_);
    return steps_;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> steps_;
};

TEST(ShardThreadTest, WhatATurnPostsItselfRunsAfterItsWritesAndBeforeTheNextSockets) {
  ShardThread thread("test-shard");
  WatchedPipe pipe;
  Steps steps;
  std::promise<void> finished;
  thread.SetEndOfTurn([&] { steps.Add("writes"); });
  thread.Start();
  thread.Post([&] {
    thread.Watch(pipe.read_end(), EPOLLIN, [&](uint32_t) {
      pipe.Drain();
      steps.Add("socket");
      finished.set_value();
    });
    // Ready before the turn ends: the next wait returns it at once.
    pipe.MakeReadable();
    steps.Add("posted from afar");
    thread.Post([&] { steps.Add("posted to itself"); });
  });
  finished.get_future().wait();
  thread.Stop();
  const std::vector<std::string> expected = {"posted from afar", "writes", "posted to itself", "writes", "socket",
                                             "writes"};
  const std::vector<std::string> got = steps.Get();
  ASSERT_GE(got.size(), expected.size());
  EXPECT_EQ(std::vector<std::string>(got.begin(), got.begin() + expected.size()), expected);
}

TEST(ShardThreadTest, AThreadThatKeepsPostingToItselfStillServesItsSockets) {
  ShardThread thread("test-shard");
  WatchedPipe pipe;
  std::promise<void> served;
  int posts_run = 0;  // shard thread only
  std::function<void()> again = [&] {
    posts_run++;
    thread.Post(again);
  };
  thread.Start();
  thread.Post([&] {
    thread.Watch(pipe.read_end(), EPOLLIN, [&](uint32_t) {
      pipe.Drain();
      served.set_value();
    });
    pipe.MakeReadable();
    again();
  });
  EXPECT_EQ(served.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  thread.Stop();
  EXPECT_GT(posts_run, 0);
}

}  // namespace
}  // namespace charybdis::node
