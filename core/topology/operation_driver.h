#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/cluster/cluster_layout.h"
#include "core/env/shard_env.h"
#include "core/topology/topology_log.h"
#include "proto/messages.pb.h"

namespace charybdis::topology {

// Drives the topology operation whose begin entry named this node its
// driver, stage by stage (docs/topology.md, "Who drives an operation"), on
// shard 0. Each stage starts with a barrier: every member that has not
// left and that the failure detector holds alive must answer that all its
// shards hold the stage's version and that requests begun under an older
// one have ended (barrier_answerer.h). Then:
// - write both, read old: asks every shard of each pending replica to
//   stream what it gains from its source (PlanStreams of every replication
//   in use, one StreamRanges per transfer and shard), and once every
//   stream answered done, appends read_new;
// - write both, read new: appends finish (a change of replication first
//   appends its ALTER KEYSPACE to the schema log: the schema changes only
//   once the data is in place);
// - after the finish, a last barrier: once every live member holds the
//   finish, the operation is done (progress: barrier passed at the
//   finish's version), and its removed node may be stopped.
// Its progress is the log and the receivers' stream progress, both
// durable, so after a crash it picks the stage up from the log, and the
// receivers' streams resume where they stopped (they are named after the
// operation's starting version and the source).
class OperationDriver {
 public:
  // Every replication in use, by whose it is (cql::SchemaLog::Replications).
  using Replications = std::function<std::map<std::string, TableReplication>()>;
  // Appends an entry through the topology agent (TopologyAgent::Submit).
  using Append = std::function<void(Entry entry, std::function<void(ClientResponse)> answer)>;
  // Appends a statement to the schema log (SchemaAgent::Submit).
  using AppendSchema = std::function<void(std::string statement, std::function<void(ClientResponse)> answer)>;
  OperationDriver(ShardEnv env, uint32_t shards_per_node, const TopologyLog& log, Replications replications,
                  Append append, AppendSchema append_schema, std::function<bool(NodeId)> held_down);
  OperationDriver(const OperationDriver&) = delete;
  OperationDriver& operator=(const OperationDriver&) = delete;

  // The log grew, or was loaded.
  void OnTopologyChange();
  // A receiver's answer, of this life's requests or an earlier one's: a
  // stream is known by its receiver and name.
  void OnStreamDone(const Envelope& message);
  // A member's answer to the barrier.
  void OnBarrierDone(const Envelope& message);
  // Answers once the change of `keyspace`'s replication that began at
  // `since_version` (driven here) is done, every live member holding its
  // finish (OK), or rolled back (an error). Not if this node restarts first.
  void WhenDone(const std::string& keyspace, uint64_t since_version, std::function<void(ClientResponse)> answer);

  // Where the stage in hand stands, for ctl and status: streams asked of
  // the receivers' shards, those done, and the pairs they stored.
  struct Progress {
    uint64_t version = 0;  // the stage's topology version; 0: driving nothing
    bool barrier_passed = false;
    size_t streams = 0;
    size_t streams_done = 0;
    uint64_t pairs = 0;
    uint64_t bytes = 0;  // of those pairs, keys and values
    // Time left, as the streams done so far took; 0 when unknown.
    Nanos estimated_left = 0;
  };
  Progress progress() const;

  // How often streams not yet done are asked for again: a receiver that
  // restarted resumes them, one still running answers that they run.
  static constexpr Nanos kStreamResendInterval = 10 * kSecond;
  // After an append that failed (unavailable, or lost to another entry).
  static constexpr Nanos kRetryDelay = 1 * kSecond;
  // How often the barrier is asked again of the members that have not
  // answered, and those found down are let go.
  static constexpr Nanos kBarrierResendInterval = 2 * kSecond;

 private:
  struct Stream {
    Address receiver;
    StreamRanges request;  // without its request id
    bool done = false;
  };

  void Drive();
  bool FinishedOwnOperation() const;
  void StartBarrier();
  void AskBarrier();
  void BarrierPassed();
  void StartStreams();
  void SendStream(size_t index);
  void ResendLater();
  void AppendStep(Entry::Kind kind);
  void AppendSchemaThenFinish();
  void AnswerWaiters();
  // Forgets the stage in hand: its answers and timers no longer count.
  void Reset();

  ShardEnv env_;
  const uint32_t shards_per_node_;
  const TopologyLog& log_;
  Replications replications_;
  Append append_;
  AppendSchema append_schema_;
  std::function<bool(NodeId)> held_down_;  // FailureDetector::HeldDown
  struct Waiter {
    std::string keyspace;
    uint64_t since_version = 0;
    std::function<void(ClientResponse)> answer;
  };
  std::vector<Waiter> waiters_;
  // The topology version whose stage is in hand; 0: none.
  uint64_t working_version_ = 0;
  bool barrier_passed_ = false;
  std::set<NodeId> barrier_waiting_;  // members yet to answer
  std::vector<Stream> streams_;
  size_t streams_done_ = 0;
  uint64_t pairs_streamed_ = 0;  // by the streams done, in their receivers' lives
  uint64_t bytes_streamed_ = 0;
  Nanos streams_started_at_ = 0;
  uint64_t last_request_id_ = 0;
  TimerId timer_ = 0;
};

}  // namespace charybdis::topology
