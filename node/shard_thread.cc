#include "node/shard_thread.h"

#include <pthread.h>

#include <chrono>

#include "core/assert.h"

namespace charybdis::node {

ShardThread::ShardThread(std::string name) : name_(std::move(name)) {}

ShardThread::~ShardThread() { Stop(); }

void ShardThread::Start() {
  CHARYBDIS_ASSERT(!thread_.joinable());
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), name_.substr(0, 15).c_str());
    Loop();
  });
}

void ShardThread::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
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
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    mailbox_.push_back(std::move(fn));
  }
  wake_.notify_one();
}

void ShardThread::Loop() {
  std::deque<std::function<void()>> batch;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      while (mailbox_.empty() && !stopping_) {
        if (timers_.empty()) {
          wake_.wait(lock);
          continue;
        }
        const Nanos wait = timers_.begin()->first - Steady();
        if (wait <= 0) break;
        wake_.wait_for(lock, std::chrono::nanoseconds(wait));
      }
      if (stopping_) {
        batch.swap(mailbox_);
        break;
      }
      batch.swap(mailbox_);
    }
    for (auto& fn : batch) fn();
    batch.clear();
    // Timers due now, each removed before it runs (it may set new ones).
    const Nanos now = Steady();
    while (!timers_.empty() && timers_.begin()->first <= now) {
      auto it = timers_.begin();
      std::function<void()> fn = std::move(it->second.fn);
      timer_index_.erase(it->second.id);
      timers_.erase(it);
      fn();
    }
  }
  batch.clear();  // dropped work: whoever waits on it learns so
  timers_.clear();
  timer_index_.clear();
}

}  // namespace charybdis::node
