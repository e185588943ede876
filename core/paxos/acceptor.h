#pragma once

#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "core/metrics.h"
#include "core/shard_env.h"

namespace charybdis {

// The acceptor side of Paxos on one shard, per partition: promise, accept,
// commit. Its state (promised ballot, accepted proposal, latest commit) is
// durable before any reply. Decisions for one partition are made one at a
// time on an in-memory copy loaded once from storage; replies wait until
// the decision is synced.
class Acceptor {
 public:
  Acceptor(ShardEnv env, ShardMetrics& metrics);
  Acceptor(const Acceptor&) = delete;
  Acceptor& operator=(const Acceptor&) = delete;

  // Learns which partitions hold an uncommitted accepted proposal.
  void Start();
  void OnPrepare(const Envelope& message);
  void OnAccept(const Envelope& message);
  void OnCommit(const Envelope& message);

  // Whether this shard holds, for the partition, an accepted proposal newer
  // than its latest commit (true until Start has finished: a read must then
  // assume the worst).
  bool InProgress(const std::string& table, const std::string& partition_key) const;

 private:
  struct Entry {
    bool loaded = false;
    PaxosState state;
    std::deque<std::function<void(PaxosState&)>> waiting;  // until loaded
  };

  // Runs `decide` on the partition's state, loading it first if needed.
  void WithState(const std::string& key, std::function<void(PaxosState&)> decide);
  // Syncs the state (and `extra` writes) before calling `then`.
  void Persist(const std::string& key, const PaxosState& state, WriteBatch extra,
               std::function<void(bool ok)> then);
  void NoteProgress(const std::string& key, const PaxosState& state);

  ShardEnv env_;
  ShardMetrics& metrics_;
  bool started_ = false;
  std::map<std::string, Entry> partitions_;
  std::set<std::string> in_progress_;  // storage keys of the states
};

}  // namespace charybdis
