#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/cluster/cluster_layout.h"
#include "core/env/shard_env.h"
#include "core/topology/topology_log.h"

namespace charybdis::topology {

// The whole log, as a node keeps its copy and as shard 0 tells the node's
// other shards.
TopologyLogCopy CopyOf(const TopologyLog& log);
// Appends the entries of `copy` that `log` lacks. A copy is always a prefix
// of the log Paxos decided, so a late one appends nothing.
void AppendNewEntries(const TopologyLogCopy& copy, TopologyLog& log);

// Keeps a node's topology log (topology_log.h) in step with the cluster's,
// on shard 0 of every node, as the schema agent keeps the schema log
// (docs/topology.md, "The topology log").
//
// - Entry k is a Paxos instance of its own: the partition TopologyLogKey(k)
//   of system.topology_log, among the owners of the topology entries 1 to
//   k - 1 make (TopologyLog::ParticipantsOfNext), a majority deciding.
//   An entry is proposed only IF NOT EXISTS, so each k is decided once.
// - Changes (ClientRequest.topology_change) run one at a time; one the
//   topology refuses, or one that would leave fewer owners than a
//   replication in use needs, is answered with the refusal, and never
//   proposed.
// - It keeps what it applied in the node's own storage, synced before a
//   change is acknowledged, and loads it at start.
// - Whenever a peer's heartbeat shows a longer log, it asks that peer for
//   its copy and takes the entries it lacks: every node appends only
//   entries Paxos decided (its own proposal won, or a serial read
//   returned it), so every copy is a prefix of the one decided log. If no
//   copy comes, or when it must (a change to check, a barrier, a lost
//   local copy), it reads with serial reads, one instance at a time, each
//   among the participants it knows from the entries before it (a serial
//   read finishes a half-done proposal). The copy is what lets it catch
//   up once the owners of old versions are gone (entry k is readable by
//   Paxos only while a majority of version k - 1's owners live), and
//   within a round trip where a read could wait out a timeout.
class TopologyAgent {
 public:
  // Runs one Paxos round among `participants`: the conditional write `cas`,
  // or, when it has no statement, the serial read `read`. Answers exactly
  // once (the coordinator's round times out).
  using PaxosAmong = std::function<void(std::vector<NodeId> participants, CasOp cas, ReadOp read,
                                        std::function<void(ClientResponse)> done)>;
  // Every replication in use, by whose it is (cql::SchemaLog::Replications).
  using Replications = std::function<std::map<std::string, TableReplication>()>;
  // `on_change`: the log was loaded at start (even empty), or grew.
  TopologyAgent(ShardEnv env, TopologyLog& log, PaxosAmong paxos, Replications replications,
                std::function<void()> on_change);
  TopologyAgent(const TopologyAgent&) = delete;
  TopologyAgent& operator=(const TopologyAgent&) = delete;

  void Start();
  // A topology_change request from a client (perhaps forwarded by a shard).
  void OnRequest(const Envelope& message);
  // A change from this node's operation driver, answered through `answer`
  // exactly once, as a client would be, and never from inside this call.
  void Submit(Entry entry, std::function<void(ClientResponse)> answer);
  // What a peer's heartbeat says of its topology log.
  void OnPeerTopology(NodeId peer, uint64_t sequence);
  // A peer asks for this node's copy of the log / this node's request is
  // answered.
  void OnLogRequest(const Envelope& message);
  void OnLogCopy(const Envelope& message);
  // Someone knows of a newer topology (a driver's barrier): read the log.
  void CatchUp();
  // What this node's heartbeats say of its topology log.
  void Stamp(Heartbeat& heartbeat) const;
  // Whether the log is loaded and as long as every member whose heartbeat
  // was heard showed, and one was heard: the node may then serve clients
  // (held_until_current.h).
  bool loaded() const { return step_ != Step::kLoading; }
  bool HoldsPeersLog() const {
    return step_ != Step::kLoading && heard_member_ && log_.sequence() >= newest_peer_sequence_;
  }

  static constexpr const char* kLocalKey = "system/topology_log";
  static constexpr Nanos kRetryDelay = 1 * kSecond;
  // Proposals lost to other nodes' before a change gives up.
  static constexpr int kMaxAttempts = 5;
  // How often a node behind asks a peer for its copy of the log, and how
  // long it waits for one before it reads by Paxos.
  static constexpr Nanos kCopyRequestInterval = 1 * kSecond;
  static constexpr Nanos kCopyWait = 500 * kMillisecond;

 private:
  struct Change {
    Address client;
    uint64_t request_id = 0;
    std::function<void(ClientResponse)> answer;  // set: answers this node's driver, not a client
    Entry entry;
    int attempts = 0;
    // Checked against a log read after it arrived: a refusal then is the
    // cluster's, not this node's lag.
    bool checked_after_read = false;
  };
  enum class Step { kLoading, kIdle, kReading, kProposing, kWaiting, kSaving };

  void OnLoaded(absl::StatusOr<std::optional<std::string>> stored);
  void Save(std::function<void()> then);
  void Next();
  void ReadNext();
  // Takes the entries of the longest copy a peer sent that this node
  // lacks; false if there are none.
  bool TakeOfferedCopy();
  void OnRead(const ClientResponse& response);
  void Propose(Change& change);
  void OnProposed(const ClientResponse& response);
  // Why `entry` cannot follow the log: the topology refuses it, or it would
  // leave too few owners for a replication in use (CheckPlaceable).
  absl::Status Refusal(const Entry& entry) const;
  // Applies entry sequence() + 1 as Paxos decided it.
  void Append(Entry entry);
  // Sends this node's copy of the log to every other member.
  void PushCopy();
  void WaitThenGoOn();
  // Without the rest of the log no change can be checked: fails what waits
  // rather than hold its operators.
  void FailQueued(const ClientResponse& why);
  void Reply(const Change& change, ClientResponse response);

  ShardEnv env_;
  TopologyLog& log_;
  PaxosAmong paxos_;
  Replications replications_;
  std::function<void()> on_change_;
  std::deque<Change> changes_;
  bool read_wanted_ = false;  // the log may be longer than what we applied
  bool heard_member_ = false;
  uint64_t newest_peer_sequence_ = 0;  // the longest log a member's heartbeat showed
  TopologyLogCopy offered_copy_;  // the longest copy a peer sent, until taken
  Nanos copy_asked_at_ = -kCopyRequestInterval;
  Step step_ = Step::kLoading;
};

}  // namespace charybdis::topology
