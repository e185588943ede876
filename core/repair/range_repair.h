#pragma once

// A shard's part of `ctl repair` (docs/repair.md), in the spirit of
// ScyllaDB's row-level repair. For each table and range the node repairs,
// the shard and the same shard of the range's other replicas agree first
// on its Paxos state, then on the rows they hold. The Paxos state (docs/
// repair.md, "Paxos state"): every replica fences the span at the time
// the repair began (no prepare or accept below it from then on) and names
// its partitions with an accepted proposal not yet committed; the shard
// finishes each of their rounds as a proposer. Then the rows, a round of
// at most kRoundRows rows at a time:
//
//   1. each replica hashes its next rows after the round's start, and
//      answers the last one and one hash of them all: when every answer is
//      the same, the round is in agreement, at the cost of a hash;
//   2. else each hashes them again one by one, and the rows up to the
//      smallest of the replicas' last rows (all of them hashed theirs) are
//      compared: those some replica lacks or holds otherwise differ;
//   3. the shard fetches each differing version once (from one replica of
//      each hash), merges them, last write wins;
//   4. and sends each replica what it lacks of the merge, applied synced.
//
// Once a span's rounds are done, every replica records that it was
// repaired, and since when (repair_history.h): below that time its Paxos
// state is finished, and may be purged.
//
// A replica that does not answer, or cannot read its rows, stops the
// repair: what was repaired stays so, the rest waits for a rerun. So does
// a topology change, which moves ranges under it.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/cluster/cluster_layout.h"
#include "core/data/partition.h"
#include "core/env/shard_env.h"
#include "core/repair/repair_plan.h"
#include "core/telemetry/metrics.h"
#include "core/topology/topology_log.h"
#include "proto/messages.pb.h"

namespace charybdis::repair {

class RangeRepair {
 public:
  // The storage tables placed by token, each with its replication.
  using Tables = std::function<std::map<std::string, ReplicationConfig>()>;
  // Finishes any unfinished Paxos round of a partition (the coordinator's).
  using FinishRound =
      std::function<void(const std::string& table, const std::string& partition_key, std::function<void(bool ok)>)>;
  RangeRepair(ShardEnv env, const topology::TopologyLog& log, Tables tables, FinishRound finish_round,
              ShardMetrics& metrics);
  RangeRepair(const RangeRepair&) = delete;
  RangeRepair& operator=(const RangeRepair&) = delete;

  // A ShardRepair from shard 0.
  void OnRequest(const Envelope& message);
  // The replicas' answers.
  void OnFenced(const Envelope& message);
  void OnHashes(const Envelope& message);
  void OnRows(const Envelope& message);
  void OnPushAck(const Envelope& message);
  void OnRecordAck(const Envelope& message);

  // Most rows a replica hashes for one round: at first, and after a round
  // that differed.
  static constexpr uint32_t kRoundRows = 256;
  // Rounds in agreement on an idle shard double, up to this: fewer round
  // trips where replicas agree.
  static constexpr uint32_t kMaxRoundRows = 1024;
  // While the shard serves clients: a replica's thread is held for less
  // at a time (docs/repair.md, "Beside clients").
  static constexpr uint32_t kBusyRoundRows = 32;
  // How long a replica may take to answer one step.
  static constexpr Nanos kAnswerTimeout = 10 * kSecond;

 private:
  struct Part {
    std::string table;
    RepairRange range;
  };
  enum class Step { kFence, kFinishRounds, kHashes, kRowHashes, kFetch, kPush, kRecord };
  // A row that differs in a round: by replica, the hash of its version
  // (absent: the replica lacks the row).
  struct DifferingRow {
    std::string partition_key;
    std::string clustering_key;
    bool range_tombstones = false;  // the partition's, compared as a row
    std::map<NodeId, uint64_t> hashes;
  };
  struct Run {
    Address requester;
    uint64_t request_id = 0;
    uint64_t version = 0;
    std::vector<Part> parts;
    size_t part = 0;
    // When the part's first round began, by this node's clock (0: not yet).
    Timestamp part_began_us = 0;
    uint32_t round_rows = kRoundRows;
    bool small_rounds = false;  // Buggify's: a few rows each, whatever the load
    bool round_agreed = false;  // the last round's replicas all agreed
    // When the round in flight began, and the shard's foreground requests
    // then (ForegroundRequests).
    Nanos round_began = 0;
    uint64_t foreground_then = 0;
    // The round starts after this row (none: at the range's start).
    std::optional<std::pair<std::string, std::string>> after;
    RepairSummary summary;
    // The partitions whose unfinished Paxos rounds the replicas named
    // under the part's fence, not finished yet.
    std::set<std::string> unfinished;
    // The step in flight and the replicas it waits for.
    Step step = Step::kHashes;
    uint64_t step_id = 0;
    std::set<NodeId> waiting;
    std::map<NodeId, RepairHashes> hashes;
    // Steps 3 and 4 of the round: its rows that differ, by storage key,
    // where the round ends (none: every replica's range ended), and the
    // merge of their fetched versions and each hash's version.
    std::map<std::string, DifferingRow> differing;
    std::optional<std::pair<std::string, std::string>> round_end;
    std::map<std::string, Partition> merged;
    std::map<std::pair<std::string, uint64_t>, Partition> versions;
  };

  absl::StatusOr<std::vector<Part>> PlanParts(const RepairOp& request) const;
  void Next();
  // Sends the step's request to every replica in `to`, and times it out.
  void Send(Step step, const std::set<NodeId>& to, const std::function<void(NodeId, Envelope&)>& fill);
  // The part's Paxos state: the fence, then its unfinished rounds.
  void FencePaxos();
  void FinishRounds();
  void SendHashRequests(bool each_row);
  // Whether `message` answers the step in flight (and takes it off the wait).
  bool Answers(const Envelope& message, Step step, uint64_t request_id);
  void OnAllHashes();
  void CompareRows();
  void FetchDiffering();
  void OnAllRows();
  // Keeps a replica's version of a differing row (or its partition's range
  // tombstones), stored under `key`, if it was asked for.
  void TakeFetched(NodeId replica, const std::string& key, Partition version);
  void PushMissing();
  // The round is done: the next starts after `end` (none: the part is).
  void EndRound(std::optional<std::pair<std::string, std::string>> end);
  // Every replica records the part as repaired.
  void RecordPart();
  // The next round: at once on an idle shard (larger after a round in
  // agreement); on one that served clients during the last round, a small
  // one, after a pause four times as long as it.
  void Continue();
  std::string Describe(const Part& part) const;
  void Finish(const std::string& error);

  ShardEnv env_;
  const topology::TopologyLog& log_;
  Tables tables_;
  FinishRound finish_round_;
  ShardMetrics& metrics_;
  uint64_t last_step_id_ = 0;
  std::optional<Run> run_;
};

}  // namespace charybdis::repair
