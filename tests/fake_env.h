#pragma once

// A seam for unit tests of core/ protocol objects, in the spirit of
// LevelDB's EnvWrapper and ScyllaDB's raft fsm tests: a manual clock, a
// network that records what was sent, and a disk whose operations wait
// until the test completes them. A test steps an Acceptor or a Proposer
// one message and one disk completion at a time, and a fake overrides only
// the one thing it cares about (StorageWrapper forwards the rest).

#include <deque>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/env/buggify.h"
#include "core/env/probe.h"
#include "core/env/random.h"
#include "core/env/reactor.h"
#include "core/env/shard_env.h"

namespace charybdis::testing {

// Time moves only when the test says so; due timers run in order.
class ManualClock final : public Clock {
 public:
  Nanos Now() const override { return now_; }
  TimerId After(Nanos delay, std::function<void()> fn) override {
    timers_.emplace(std::make_pair(now_ + delay, ++last_id_), std::move(fn));
    return last_id_;
  }
  void Cancel(TimerId id) override {
    std::erase_if(timers_, [id](const auto& entry) { return entry.first.second == id; });
  }
  void Advance(Nanos by) {
    const Nanos until = now_ + by;
    while (!timers_.empty() && timers_.begin()->first.first <= until) {
      auto it = timers_.begin();
      now_ = it->first.first;
      std::function<void()> fn = std::move(it->second);
      timers_.erase(it);
      fn();
    }
    now_ = until;
  }

 private:
  Nanos now_ = 1'000'000'000;
  TimerId last_id_ = 0;
  std::map<std::pair<Nanos, TimerId>, std::function<void()>> timers_;
};

// Keeps every message sent, in order, for the test to read and deliver.
class RecordingNetwork final : public Network {
 public:
  explicit RecordingNetwork(Address self) : self_(self) {}
  void Send(const Address& to, Envelope message) override {
    message.set_from_node(self_.node);
    message.set_from_shard(self_.shard);
    message.set_to_node(to.node);
    message.set_to_shard(to.shard);
    sent_.push_back(std::move(message));
  }
  void SetReceiver(Receiver receiver) override { receiver_ = std::move(receiver); }
  // The messages sent since the last call.
  std::vector<Envelope> TakeSent() { return std::exchange(sent_, {}); }

 private:
  Address self_;
  std::vector<Envelope> sent_;
  Receiver receiver_;
};

// Runs what is posted when the test says so: one task, or all of them
// (with what they post) until none is left.
class QueuedReactor final : public Reactor {
 public:
  void Post(std::function<void()> fn) override { posted_.push_back(std::move(fn)); }
  bool RunNext() {
    if (posted_.empty()) return false;
    std::function<void()> next = std::move(posted_.front());
    posted_.pop_front();
    next();
    return true;
  }
  void RunAll() {
    while (RunNext()) {
    }
  }

 private:
  std::deque<std::function<void()>> posted_;
};

// An in-memory ordered disk. Every operation waits in a queue until the
// test calls CompleteAll (or CompleteNext); writes take effect then, and a
// synced one makes everything written so far durable.
class QueuedStorage : public Storage {
 public:
  void Apply(WriteBatch batch, Durability durability, WriteDone done) override {
    queue_.push_back([this, batch = std::move(batch), durability, done = std::move(done)] {
      for (const auto& op : batch.operations) {
        if (op.value) {
          contents_[op.key] = *op.value;
        } else {
          contents_.erase(op.key);
        }
      }
      if (durability == Durability::kSynced) durable_ = contents_;
      done(absl::OkStatus());
    });
  }
  void Get(std::string key, GetDone done) override {
    queue_.push_back([this, key = std::move(key), done = std::move(done)] {
      auto it = contents_.find(key);
      done(it == contents_.end() ? std::optional<std::string>() : std::optional<std::string>(it->second));
    });
  }
  void Scan(std::string begin, std::string end, size_t limit, ScanDone done) override {
    queue_.push_back([this, begin = std::move(begin), end = std::move(end), limit,
                      done = std::move(done)] { done(Read(begin, end, limit)); });
  }
  void ScanRanges(std::vector<ScanRange> ranges, ScanRangesDone done) override {
    queue_.push_back([this, ranges = std::move(ranges), done = std::move(done)] {
      std::vector<std::vector<KeyValue>> read;
      for (const ScanRange& range : ranges) read.push_back(Read(range.begin, range.end, range.limit));
      done(std::move(read));
    });
  }
  std::vector<KeyValue> Read(const std::string& begin, const std::string& end, size_t limit) const {
    std::vector<KeyValue> rows;
    for (auto it = contents_.lower_bound(begin);
         it != contents_.end() && rows.size() < limit && (end.empty() || it->first < end); ++it) {
      rows.push_back(KeyValue{it->first, it->second});
    }
    return rows;
  }
  void Compact(WriteDone done) override {
    queue_.push_back([done = std::move(done)] { done(absl::OkStatus()); });
  }
  size_t pending() const { return queue_.size(); }
  bool CompleteNext() {
    if (queue_.empty()) return false;
    std::function<void()> next = std::move(queue_.front());
    queue_.pop_front();
    next();
    return true;
  }
  void CompleteAll() {
    while (CompleteNext()) {
    }
  }
  std::map<std::string, std::string>& contents() { return contents_; }
  // What a power cut leaves: what the last synced write made durable;
  // operations still queued never happen.
  void PowerCut() {
    queue_.clear();
    contents_ = durable_;
  }

 private:
  std::deque<std::function<void()>> queue_;
  std::map<std::string, std::string> contents_;
  std::map<std::string, std::string> durable_;
};

// Forwards every call to another Storage; a fake overrides one method.
class StorageWrapper : public Storage {
 public:
  explicit StorageWrapper(Storage& target) : target_(target) {}
  void Apply(WriteBatch batch, Durability durability, WriteDone done) override {
    target_.Apply(std::move(batch), durability, std::move(done));
  }
  void Get(std::string key, GetDone done) override { target_.Get(std::move(key), std::move(done)); }
  void Scan(std::string begin, std::string end, size_t limit, ScanDone done) override {
    target_.Scan(std::move(begin), std::move(end), limit, std::move(done));
  }
  void ScanRanges(std::vector<ScanRange> ranges, ScanRangesDone done) override {
    target_.ScanRanges(std::move(ranges), std::move(done));
  }
  void Ingest(WriteBatch puts, WriteDone done) override { target_.Ingest(std::move(puts), std::move(done)); }
  void Compact(WriteDone done) override { target_.Compact(std::move(done)); }

 private:
  Storage& target_;
};

// Counts the probes reached, by name.
class CountingProbes final : public Probes {
 public:
  void Reached(std::string_view probe) override { reached[std::string(probe)]++; }
  bool Saw(std::string_view probe) const { return reached.count(std::string(probe)) > 0; }
  std::map<std::string, int> reached;
};

// A shard's environment made of the fakes above.
struct FakeEnv {
  explicit FakeEnv(Address self) : network(self), random(1) {
    env.self = self;
    env.clock = &clock;
    env.network = &network;
    env.storage = &storage;
    env.random = &random;
    env.buggify = &never;
  }
  ManualClock clock;
  RecordingNetwork network;
  QueuedStorage storage;
  Random random;
  NeverBuggify never;
  ShardEnv env;
};

}  // namespace charybdis::testing
