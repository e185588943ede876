#pragma once

// A shard's Paxos fences (docs/repair.md, "Paxos state"). Before a repair
// compares a table's span, every replica refuses, durably, each Paxos
// prepare and accept of the span below the time the repair began (the
// fence). Every proposal below it that will ever be accepted is then on
// disk when the repair looks, and the repair finishes it; a proposer that
// sends one later is refused. Once the span is repaired, its Paxos state
// below the fence can go (Acceptor::Purge).

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/data/span_key.h"
#include "core/data/token.h"
#include "core/env/shard_env.h"

namespace charybdis {

class PaxosFences {
 public:
  explicit PaxosFences(ShardEnv env) : env_(env) {}
  PaxosFences(const PaxosFences&) = delete;
  PaxosFences& operator=(const PaxosFences&) = delete;

  // Takes the stored fences: the pairs under kKeyPrefix. Until then no
  // fence is known, so no decision may be made.
  void Load(const std::vector<KeyValue>& stored);
  bool loaded() const { return loaded_; }

  // The highest fence over `token` of `table`, in microseconds (0: none).
  int64_t FenceOf(const std::string& table, Token token) const;
  // Raises the fence of [first, last] to `fence_us`, synced; in force once
  // `done` gets OK.
  void Raise(const std::string& table, Token first, Token last, int64_t fence_us,
             std::function<void(absl::Status)> done);

  static constexpr char kKeyPrefix[] = "system/paxos_fence/";

 private:
  // By table, then by span (last, first).
  using Spans = SpanRecords<int64_t>;

  ShardEnv env_;
  bool loaded_ = false;
  std::map<std::string, Spans> tables_;
};

}  // namespace charybdis
