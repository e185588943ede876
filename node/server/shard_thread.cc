#include "node/server/shard_thread.h"

#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "core/env/assert.h"

namespace charybdis::node {

namespace {

// epoll data of the wakeup eventfd; watches count from 1.
constexpr uint64_t kWakeupData = 0;
// Sockets handled per turn: more wait for the next turn, after the
// mailbox and the timers have had theirs.
constexpr int kMaxEventsPerTurn = 64;
// Rounds of its own posts a turn runs before it looks at its sockets
// again (a message to itself that answers itself, and so on).
constexpr int kMaxOwnPostRoundsPerTurn = 16;

// Waits up to `timeout_ns` (negative: no limit) with nanosecond precision:
// a core timer of 300 us must not wait a whole millisecond.
int WaitForEvents(int epoll, epoll_event* events, Nanos timeout_ns) {
  if (timeout_ns < 0) return epoll_wait(epoll, events, kMaxEventsPerTurn, -1);
  timespec timeout{static_cast<time_t>(timeout_ns / 1000000000), static_cast<long>(timeout_ns % 1000000000)};
  const int count = epoll_pwait2(epoll, events, kMaxEventsPerTurn, &timeout, nullptr);
  if (count >= 0 || errno != ENOSYS) return count;
  // Kernels before 5.11: milliseconds, rounded up so a timer is never early.
  return epoll_wait(epoll, events, kMaxEventsPerTurn, static_cast<int>((timeout_ns + 999999) / 1000000));
}

}  // namespace

ShardThread::ShardThread(std::string name)
    : name_(std::move(name)), epoll_(epoll_create1(EPOLL_CLOEXEC)), wakeup_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  CHARYBDIS_ASSERT(epoll_ >= 0);
  CHARYBDIS_ASSERT(wakeup_ >= 0);
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = kWakeupData;
  CHARYBDIS_ASSERT(epoll_ctl(epoll_, EPOLL_CTL_ADD, wakeup_, &event) == 0);
}

ShardThread::~ShardThread() {
  Stop();
  close(wakeup_);
  close(epoll_);
}

void ShardThread::Start() {
  CHARYBDIS_ASSERT(!thread_.joinable());
  thread_ = std::thread([this] {
    thread_id_ = std::this_thread::get_id();
    pthread_setname_np(pthread_self(), name_.substr(0, 15).c_str());
    Loop();
  });
}

void ShardThread::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  const uint64_t one = 1;
  (void)!write(wakeup_, &one, sizeof(one));
  if (thread_.joinable() && std::this_thread::get_id() != thread_.get_id()) thread_.join();
}

Nanos ShardThread::Now() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Nanos ShardThread::Steady() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

TimerId ShardThread::After(Nanos delay, std::function<void()> fn) {
  const TimerId id = ++last_timer_;
  auto it = timers_.emplace(Steady() + std::max<Nanos>(delay, 0), Timer{id, std::move(fn)});
  timer_index_.emplace(id, it);
  return id;
}

void ShardThread::Cancel(TimerId id) {
  auto it = timer_index_.find(id);
  if (it == timer_index_.end()) return;
  timers_.erase(it->second);
  timer_index_.erase(it);
}

void ShardThread::Post(std::function<void()> fn) {
  if (IsCurrent()) {
    // No lock and no wake-up: FinishTurn runs it before the thread waits.
    // Once the loop is over (teardown), dropped like any post after Stop.
    if (looping_) own_posts_.push_back(std::move(fn));
    return;
  }
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    mailbox_.push_back(std::move(fn));
    // Only a sleeping thread needs the syscall; a busy one finds the work
    // at its next turn.
    wake = sleeping_;
    sleeping_ = false;
  }
  if (wake) {
    const uint64_t one = 1;
    (void)!write(wakeup_, &one, sizeof(one));
  }
}

ShardThread::WatchId ShardThread::Watch(int fd, uint32_t events, SocketHandler handler) {
  const WatchId id = ++last_watch_;
  epoll_event event{};
  event.events = events;
  event.data.u64 = id;
  CHARYBDIS_ASSERT(epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &event) == 0);
  watched_.emplace(id, Watched{fd, std::move(handler)});
  return id;
}

void ShardThread::Rewatch(WatchId id, uint32_t events) {
  auto it = watched_.find(id);
  CHARYBDIS_ASSERT(it != watched_.end());
  epoll_event event{};
  event.events = events;
  event.data.u64 = id;
  CHARYBDIS_ASSERT(epoll_ctl(epoll_, EPOLL_CTL_MOD, it->second.fd, &event) == 0);
}

void ShardThread::Unwatch(WatchId id) {
  auto it = watched_.find(id);
  if (it == watched_.end()) return;
  epoll_ctl(epoll_, EPOLL_CTL_DEL, it->second.fd, nullptr);
  watched_.erase(it);
}

void ShardThread::SetEndOfTurn(std::function<void()> fn) { end_of_turn_ = std::move(fn); }

bool ShardThread::WaitAndDispatch() {
  Nanos timeout_ns = -1;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return false;
    if (!mailbox_.empty() || !own_posts_.empty()) {
      timeout_ns = 0;
    } else {
      sleeping_ = true;
      if (!timers_.empty()) timeout_ns = std::max<Nanos>(timers_.begin()->first - Steady(), 0);
    }
  }
  epoll_event events[kMaxEventsPerTurn];
  const int count = WaitForEvents(epoll_, events, timeout_ns);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    sleeping_ = false;
    if (stopping_) return false;
  }
  for (int i = 0; i < count; i++) {
    if (events[i].data.u64 == kWakeupData) {
      uint64_t posts;
      (void)!read(wakeup_, &posts, sizeof(posts));
      continue;
    }
    auto it = watched_.find(events[i].data.u64);
    if (it == watched_.end()) continue;  // unwatched earlier in this turn
    // A copy: the handler may unwatch itself, destroying the stored one.
    const SocketHandler handler = it->second.handler;
    handler(events[i].events);
  }
  return true;
}

void ShardThread::RunDueTimers() {
  // Each removed before it runs (it may set new ones).
  const Nanos now = Steady();
  while (!timers_.empty() && timers_.begin()->first <= now) {
    auto it = timers_.begin();
    std::function<void()> fn = std::move(it->second.fn);
    timer_index_.erase(it->second.id);
    timers_.erase(it);
    fn();
  }
}

void ShardThread::FinishTurn() {
  // Peers' messages leave first: a reply from afar takes a round trip,
  // what the shard sends itself only the time to run it.
  std::deque<std::function<void()>> round;
  for (int i = 0; i < kMaxOwnPostRoundsPerTurn; i++) {
    if (end_of_turn_) end_of_turn_();
    if (own_posts_.empty()) return;
    round.swap(own_posts_);
    for (auto& fn : round) fn();
    round.clear();
  }
  if (end_of_turn_) end_of_turn_();  // what the last round sent
}

void ShardThread::Loop() {
  std::deque<std::function<void()>> batch;
  looping_ = true;
  while (WaitAndDispatch()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      batch.swap(mailbox_);
    }
    for (auto& fn : batch) fn();
    batch.clear();
    RunDueTimers();
    FinishTurn();
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    batch.swap(mailbox_);
  }
  looping_ = false;  // what the clearing below posts is dropped
  batch.clear();  // dropped work: whoever waits on it learns so
  own_posts_.clear();
  timers_.clear();
  timer_index_.clear();
  watched_.clear();
  // A later thread may get this id: it must not pass for this one.
  thread_id_ = std::thread::id();
}

}  // namespace charybdis::node
