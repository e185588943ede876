#pragma once

// A reactor for tests of real-node storage, whose threads (the log writer,
// the storage worker) post their callbacks: the test thread plays the
// shard's and runs them.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>

#include "core/env/reactor.h"

namespace charybdis::testing {

class ThreadReactor final : public Reactor {
 public:
  void Post(std::function<void()> fn) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      posted_.push_back(std::move(fn));
    }
    wake_.notify_one();
  }

  // Runs posted work until `done()` holds; false after 60 s without.
  bool RunUntil(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!done()) {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!wake_.wait_until(lock, deadline, [this] { return !posted_.empty(); })) return false;
      std::function<void()> next = std::move(posted_.front());
      posted_.pop_front();
      lock.unlock();
      next();
    }
    return true;
  }

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> posted_;
};

}  // namespace charybdis::testing
