#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "core/env/clock.h"
#include "core/env/reactor.h"

namespace charybdis::node {

// One shard's reactor on its own thread, around epoll: a mailbox of posted
// work (any thread may post; an eventfd wakes the thread), a timer heap on
// the steady clock, and sockets the shard reads and writes itself (the
// internode connections), so a message from a peer reaches the shard with
// no thread in between. Work the thread posts itself (a message to its own
// shard, a read's completion) runs in the same turn, right after the
// turn's socket writes: it does not wait for another epoll round behind
// whatever the sockets bring. Only the shard's own code sets timers and watches
// sockets, so neither needs a lock. Now() is the wall clock, which
// timestamps writes and ballots.
class ShardThread final : public Clock, public Reactor {
 public:
  using WatchId = uint64_t;
  // Gets the epoll events (EPOLLIN, EPOLLOUT, EPOLLHUP, ...) that fired.
  using SocketHandler = std::function<void(uint32_t events)>;

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

  // Shard thread only. `fd` stays the caller's: Unwatch it before closing
  // it. A handler is never called after its Unwatch, even for events that
  // fired in the same turn.
  WatchId Watch(int fd, uint32_t events, SocketHandler handler);
  void Rewatch(WatchId id, uint32_t events);
  void Unwatch(WatchId id);
  // Before Start (or on the shard thread): `fn` runs at the end of every
  // turn, before the thread waits again, and again after each round of
  // the thread's own posts that the turn runs (the transport writes what
  // was queued for peers: one write per connection each time, however
  // many messages).
  void SetEndOfTurn(std::function<void()> fn);
  bool IsCurrent() const { return std::this_thread::get_id() == thread_id_.load(); }

 private:
  struct Timer {
    TimerId id;
    std::function<void()> fn;
  };
  struct Watched {
    int fd;
    SocketHandler handler;
  };

  void Loop();
  // Waits for sockets, posts or the next timer, and runs the socket
  // handlers. Returns false once stopping.
  bool WaitAndDispatch();
  void RunDueTimers();
  // The end of a turn: the socket writes, then what the turn posted to
  // itself, again and again while that posts more (bounded: the sockets
  // get their turn).
  void FinishTurn();
  // Steady-clock nanoseconds.
  static Nanos Steady();

  const std::string name_;
  const int epoll_;
  const int wakeup_;  // an eventfd, written by Post when the thread sleeps
  std::mutex mutex_;
  std::deque<std::function<void()>> mailbox_;  // guarded by mutex_
  bool stopping_ = false;                      // guarded by mutex_
  bool sleeping_ = false;                      // in epoll_wait; guarded by mutex_
  // Shard thread only.
  std::multimap<Nanos, Timer> timers_;
  std::map<TimerId, std::multimap<Nanos, Timer>::iterator> timer_index_;
  TimerId last_timer_ = 0;
  std::map<WatchId, Watched> watched_;
  WatchId last_watch_ = 0;
  std::function<void()> end_of_turn_;
  std::deque<std::function<void()>> own_posts_;  // posted by this thread
  bool looping_ = false;  // in Loop, before its teardown
  // Set by the thread itself first thing: work posted before Start may
  // run (and ask IsCurrent) before Start's assignment of thread_ is done.
  std::atomic<std::thread::id> thread_id_;
  std::thread thread_;
};

}  // namespace charybdis::node
