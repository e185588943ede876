#pragma once

#include <deque>
#include <functional>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/data/tombstone_gc.h"
#include "core/telemetry/metrics.h"
#include "core/env/shard_env.h"
#include "core/paxos/paxos_fences.h"
#include "core/replica/unfinished_rounds.h"

namespace charybdis {

// A Paxos state as an acceptor stores it under `key`; false when its bytes
// fail their checksum or do not parse (data loss: the acceptor refuses).
bool ParseStoredPaxosState(const std::string& key, const std::string& stored, PaxosState& state);

// The acceptor side of Paxos on one shard, per partition: promise, accept,
// commit. Its accepted proposal and latest commit are durable before any
// reply. A promise is durable in what it forbids rather than word for word
// (docs/lwt.md, "Promises without an fsync each"): the shard keeps a
// synced promise horizon, a time no promise of this life reaches, and a
// promise below it is kept in memory only; after a restart every ballot
// below the previous life's horizon is refused, which covers every promise
// a crash took. Decisions for one partition are made one at a time, in
// arrival order, on a copy of the state (loaded once); a decision's new
// state replaces the copy only once its write is done (synced, for all but
// a promise below the horizon or a prune), and the next decision for the
// partition waits until then — so nothing, not even a refusal, rests on
// state that a failed write or a crash could take back.
//
// The copies are a cache, kept bounded: a partition with nothing in flight
// (no load, no write, nothing waiting) is idle, and the least recently
// used idle ones beyond `max_idle_partitions` are dropped (a later message
// loads the state again; a promise that was only in memory leaves its
// ballot as a floor every reloaded state is raised to).
//
// Repair (docs/repair.md, "Paxos state") fences a span: its prepares and
// accepts below the fence are refused (PaxosFences). Once the span is
// repaired, an accepted proposal below both the fence and the repair is
// finished or never will be, and is ignored: no promise reports it, and a
// state wholly below them may be purged.
class Acceptor final : public UnfinishedRounds {
 public:
  static constexpr size_t kDefaultMaxIdlePartitions = 10'000;
  // How far the promise horizon is set past the ballot that raises it, and
  // how close a ballot may come to it before a promise raises it again
  // (synced, with the promise): under steady load one promise in
  // kHorizonRaiseMicros per shard is synced. Short, because ballots drawn
  // after a restart within the window start above it (a little in the
  // future, as with a clock that runs ahead).
  static constexpr int64_t kHorizonWindowMicros = 100'000;
  static constexpr int64_t kHorizonRaiseMicros = 50'000;
  // A ballot further ahead of the shard's clock never raises the horizon.
  static constexpr int64_t kHorizonMaxLeadMicros = 1'000'000;
  // Two copies, written together, so that one unreadable copy does not
  // stop the shard (the next raise writes both again).
  static constexpr const char* kHorizonKeys[] = {"system/paxos_horizon", "system/paxos_horizon/copy"};

  // When the newest repair covering `token` of `table` began, in
  // microseconds (0: none), whatever the topology since.
  using RepairedSince = std::function<int64_t(const std::string& table, Token token)>;

  // `purge_horizon`: the reads folded into promises serve the purged view
  // (docs/repair.md), as the replica's reads do (none: nothing purged).
  Acceptor(ShardEnv env, ShardMetrics& metrics,
           size_t max_idle_partitions = kDefaultMaxIdlePartitions, RepairedSince repaired_since = nullptr,
           PurgeHorizon purge_horizon = nullptr);
  Acceptor(const Acceptor&) = delete;
  Acceptor& operator=(const Acceptor&) = delete;

  // Learns which partitions hold an uncommitted accepted proposal.
  void Start();
  // The repair history is loaded (with `repaired_since`, no decision is
  // made before: a purge floor read as 0 would report proposals that
  // replicas which purged theirs no longer hold).
  void OnRepairHistoryLoaded();
  void OnPrepare(const Envelope& message);
  void OnAccept(const Envelope& message);
  void OnCommit(const Envelope& message);
  void OnPrune(const Envelope& message);
  // A partition's state streamed from a replica that loses its range
  // (core/replica/range_stream.h): merged into this shard's by the rules
  // of Paxos (the higher promise, the accept and the commit of the higher
  // ballot, every commit origin remembered), synced. `done` gets OK once
  // durable, DataLoss for bytes that do not parse, Unavailable when the
  // disk refused.
  void MergeStreamed(const std::string& key, const std::string& stored, std::function<void(absl::Status)> done);
  // Whether decisions may be made: the promise horizon and the fences (one
  // scan loads both) and the repair history are known.
  bool Ready() const { return horizon_.loaded && fences_.loaded() && history_loaded_; }
  // What a stream sends of the state stored under `key` (docs/repair.md,
  // "Paxos state"): the purged view, as promises serve it. A new owner
  // knows neither the span's fence nor its repairs, so a proposal or a
  // commit below the purge floor it were sent, it would report again
  // after the other replicas purged theirs. Nothing when the state is
  // wholly below; the stored bytes when they do not parse (the receiver
  // refuses them). REQUIRES: Ready().
  std::optional<std::string> StreamedView(const std::string& table, const std::string& key,
                                          const std::string& stored) const;
  // A repair's fence (PaxosFence): raised durably, then answered with the
  // span's partitions whose accepted proposal is not committed.
  void OnFence(const Envelope& message);
  // Deletes the partition's Paxos state if it is wholly below its span's
  // purge floor; `done` gets whether it did.
  void Purge(const std::string& table, const std::string& partition_key, std::function<void(bool purged)> done);

  // Whether this shard holds, for the partition, an accepted proposal newer
  // than its latest commit (true until Start has finished: a read must then
  // assume the worst).
  bool InProgress(const std::string& table, const std::string& partition_key) const override;
  std::optional<std::vector<std::string>> InProgressIn(const std::string& table, Token first,
                                                       Token last) const override;

  // Partitions whose state is cached (for tests and the bound's check).
  size_t cached_partitions() const { return partitions_.size(); }

 private:
  // The answer a decision owes its proposer, as data: Send performs it once
  // the decision's write is done, the one place an acceptor sends from.
  struct Answer {
    enum class Kind { kNone, kRefusedPromise, kPromise, kAcceptReply, kCommitAck };
    Kind kind = Kind::kNone;
    Address to;
    Envelope message;
    PaxosPrepare prepare;  // kPromise: the rows read into it before it goes
  };
  // What a decision wants: a new state to sync (with `extra` writes in the
  // same batch), or none; then its answer goes to the proposer.
  struct Decision {
    std::optional<PaxosState> next;
    // A prune may be lost in a crash: the state it drops is only a copy.
    Durability durability = Durability::kSynced;
    // A purge: the state's key is deleted, and `next` is empty.
    bool erase = false;
    // A promise below the horizon: the new state needs no write at all.
    bool in_memory = false;
    WriteBatch extra;
    // Runs once the write is done (ok or not), before the answer; at once
    // for a decision without one.
    std::function<void(bool ok)> written;
    Answer answer;
  };
  using Decide = std::function<Decision(const PaxosState& state)>;

  struct Entry {
    bool loaded = false;
    bool loading = false;
    bool busy = false;  // a decision's write is in flight
    PaxosState state;   // as on disk, but for a promise kept in memory
    bool promise_in_memory = false;  // `state.promised()` was never written
    std::deque<Decide> waiting;
    // Its place in idle_ while it is idle.
    std::optional<std::list<std::string>::iterator> idle;
  };

  // Queues a decision on the partition's state and runs what can run.
  void Submit(const std::string& key, Decide decide);
  void RunNext(const std::string& key);
  void Load(const std::string& key);
  // Reads the promise horizon of the previous life; nothing is decided
  // before it is known.
  void LoadHorizon();
  // How the promise of `ballot` is kept: in memory below the horizon, else
  // synced with a raised horizon.
  void PlanPromise(const Ballot& ballot, Decision& decision);
  // The rows a prepare names (or its whole partition), in key order.
  void ReadForPrepare(const PaxosPrepare& prepare, Storage::ScanDone done);
  // Sends `answer`, its decision's write done and `durable` or not.
  void Send(Answer answer, bool durable);
  // A promise reads the rows its prepare names first (when durable).
  void SendPromise(Answer answer, bool durable);
  // Applies a decision that needs no write.
  void KeepInMemory(Entry& entry, const std::string& key, Decision& decision);
  void NoteProgress(const std::string& key, const PaxosState& state);
  // Runs the decisions that waited until Ready.
  void RunWaiting();
  // Below this ballot the partition's prepares and accepts are refused:
  // `promised`, or the span's fence if higher.
  Ballot AtLeastFence(const std::string& table, const std::string& partition_key, const Ballot& promised) const;
  // The fence's partitions with an unfinished proposal not below their
  // purge floor, or a write in flight.
  std::vector<std::string> UnfinishedIn(const PaxosFence& fence) const;
  // InProgressIn's partitions, once the states are loaded.
  std::vector<std::string> InProgressAmong(const std::string& table, Token first, Token last) const;
  // Below this time (microseconds) the partition's Paxos state is
  // repaired: an accepted proposal there is ignored, and a state wholly
  // there may be purged.
  int64_t PurgeFloorOf(const std::string& table, const std::string& partition_key) const;
  // `state` as a replica that purged below `floor` holds it: without an
  // accepted proposal or a commit below it; nothing when its promise is
  // below it too (Purge may then delete it, a stream not send it).
  static std::optional<PaxosState> PurgedState(PaxosState state, int64_t floor);
  // The partition's entry, taken out of the idle list (it is in use).
  Entry& Use(const std::string& key);
  // Files the entry as idle if it is, and drops the oldest idle ones
  // beyond the bound.
  void MaybeIdle(const std::string& key);

  ShardEnv env_;
  ShardMetrics& metrics_;
  RepairedSince repaired_since_;
  PurgeHorizon purge_horizon_;
  PaxosFences fences_;
  bool history_loaded_;
  bool started_ = false;
  // The promise horizon, in ballot microseconds.
  struct Horizon {
    bool loaded = false;
    bool reading = false;
    bool corrupt = false;  // unreadable: no decision can be made safely
    int64_t durable_micros = 0;  // synced; every in-memory promise is below it
    int64_t written_micros = 0;  // the largest issued (>= durable_micros)
  };
  Horizon horizon_;
  // Every state is raised to this promise when it is loaded: the previous
  // life's horizon, then the largest in-memory promise dropped from the
  // cache.
  Ballot floor_;
  std::map<std::string, Entry> partitions_;
  const size_t max_idle_partitions_;
  std::list<std::string> idle_;  // idle partitions, most recently used first
  // Storage keys of the states with an uncommitted accepted proposal, and
  // its ballot's microseconds.
  std::map<std::string, int64_t> in_progress_;
};

}  // namespace charybdis
