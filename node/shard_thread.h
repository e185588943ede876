#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "core/clock.h"
#include "core/reactor.h"

namespace charybdis::node {

// One shard's reactor on its own thread: a mailbox of posted work (any
// thread may post) and a timer heap on the steady clock (only the shard's
// own code sets and cancels timers, so the heap needs no lock). Now() is
// the wall clock, which timestamps writes and ballots.
class ShardThread final : public Clock, public Reactor {
 public:
  explicit ShardThread(std::string name);
  ShardThread(const ShardThread&) = delete;
  ShardThread& operator=(const ShardThread&) = delete;
  // Stops (if still running) and joins.
  ~ShardThread() override;

  void Start();
  // Stops once the work running now is done; queued and later posts are
  // dropped (a graceful shutdown drains requests before this).
  void Stop();

  Nanos Now() const override;
  TimerId After(Nanos delay, std::function<void()> fn) override;
  void Cancel(TimerId id) override;
  void Post(std::function<void()> fn) override;

 private:
  void Loop();
  // Steady-clock nanoseconds.
  static Nanos Steady();

  const std::string name_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> mailbox_;  // guarded by mutex_
  bool stopping_ = false;                      // guarded by mutex_
  // Shard thread only.
  struct Timer {
    TimerId id;
    std::function<void()> fn;
  };
  std::multimap<Nanos, Timer> timers_;
  std::map<TimerId, std::multimap<Nanos, Timer>::iterator> timer_index_;
  TimerId last_timer_ = 0;
  std::thread thread_;
};

}  // namespace charybdis::node
