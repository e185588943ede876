#pragma once

#include <deque>
#include <functional>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "core/metrics.h"
#include "core/shard_env.h"

namespace charybdis {

// A Paxos state as an acceptor stores it under `key`; false when its bytes
// fail their checksum or do not parse (data loss: the acceptor refuses).
bool ParseStoredPaxosState(const std::string& key, const std::string& stored, PaxosState& state);

// The acceptor side of Paxos on one shard, per partition: promise, accept,
// commit. Its state (promised ballot, accepted proposal, latest commit) is
// durable before any reply. Decisions for one partition are made one at a
// time, in arrival order, on a copy of the state as it is on disk (loaded
// once); a decision's new state replaces the copy only once it is synced,
// and the next decision for the partition waits until then — so nothing,
// not even a refusal, rests on state that a failed write or a crash could
// take back.
//
// The copies are a cache, kept bounded: a partition with nothing in flight
// (no load, no write, nothing waiting) is idle, its copy equal to the disk,
// and the least recently used idle ones beyond `max_idle_partitions` are
// dropped (a later message loads the state again).
class Acceptor {
 public:
  static constexpr size_t kDefaultMaxIdlePartitions = 10'000;

  Acceptor(ShardEnv env, ShardMetrics& metrics,
           size_t max_idle_partitions = kDefaultMaxIdlePartitions);
  Acceptor(const Acceptor&) = delete;
  Acceptor& operator=(const Acceptor&) = delete;

  // Learns which partitions hold an uncommitted accepted proposal.
  void Start();
  void OnPrepare(const Envelope& message);
  void OnAccept(const Envelope& message);
  void OnCommit(const Envelope& message);
  void OnPrune(const Envelope& message);

  // Whether this shard holds, for the partition, an accepted proposal newer
  // than its latest commit (true until Start has finished: a read must then
  // assume the worst).
  bool InProgress(const std::string& table, const std::string& partition_key) const;

  // Partitions whose state is cached (for tests and the bound's check).
  size_t cached_partitions() const { return partitions_.size(); }

 private:
  // What a decision wants: a new state to sync (with `extra` writes in the
  // same batch), or none; then `reply(durable)` answers the proposer.
  struct Decision {
    std::optional<PaxosState> next;
    // A prune may be lost in a crash: the state it drops is only a copy.
    Durability durability = Durability::kSynced;
    WriteBatch extra;
    std::function<void(bool durable)> reply;
  };
  using Decide = std::function<Decision(const PaxosState& state)>;

  struct Entry {
    bool loaded = false;
    bool loading = false;
    bool busy = false;  // a decision's write is in flight
    PaxosState state;   // as it is on disk
    std::deque<Decide> waiting;
    // Its place in idle_ while it is idle.
    std::optional<std::list<std::string>::iterator> idle;
  };

  // Queues a decision on the partition's state and runs what can run.
  void Submit(const std::string& key, Decide decide);
  void RunNext(const std::string& key);
  void Load(const std::string& key);
  void NoteProgress(const std::string& key, const PaxosState& state);
  // The partition's entry, taken out of the idle list (it is in use).
  Entry& Use(const std::string& key);
  // Files the entry as idle if it is, and drops the oldest idle ones
  // beyond the bound.
  void MaybeIdle(const std::string& key);

  ShardEnv env_;
  ShardMetrics& metrics_;
  bool started_ = false;
  std::map<std::string, Entry> partitions_;
  const size_t max_idle_partitions_;
  std::list<std::string> idle_;  // idle partitions, most recently used first
  std::set<std::string> in_progress_;  // storage keys of the states
};

}  // namespace charybdis
