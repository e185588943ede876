#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>

#include "core/schema/schema_log.h"
#include "core/env/shard_env.h"

namespace charybdis {

// Keeps a node's schema log (core/schema/schema_log.h) in step with the
// cluster's, on shard 0 of every node (as the failure detector does).
//
// The log is the partition "log" of system.schema_log, replicated like any
// other. An entry is written only by a Paxos round that appends the next
// sequence number IF NOT EXISTS, after the statement was checked against
// every entry before it. So entries form one sequence that every node
// applies in the same order, and DDL from two nodes at once cannot both
// create one table: the loser reads the log, checks again, and is told
// AlreadyExists.
//
// - Schema changes (ClientRequest.schema_change) run one at a time.
// - It keeps what it applied in the node's own storage (synced before a
//   change is acknowledged) and loads it at start, so a restart costs the
//   cluster nothing.
// - Whenever a peer's heartbeat shows a longer log, it reads the rest of
//   the log with SERIAL (which finishes a half-done append), so a node that
//   was down catches up. A node whose local copy was lost catches up the
//   same way, or at its next change (whose append then finds the number
//   taken).
// - Its requests go through this node's coordinator, like a client's.
// The whole log, as shard 0 keeps it on disk and sends it to the node's
// other shards.
SchemaUpdate EntriesOf(const cql::SchemaLog& log);
// Appends the entries of `update` that `log` does not hold yet (`update`
// holds a whole log, of which `log` holds a prefix).
void AppendNewEntries(const SchemaUpdate& update, cql::SchemaLog& log);

class SchemaAgent {
 public:
  // Called after the log grew, or a peer's schema version changed.
  using OnChange = std::function<void()>;
  // Starts the topology operation that changes a keyspace's replication
  // (docs/topology.md), for a client's ALTER KEYSPACE that changes it:
  // the operation appends `entry` once the data is in place. `answer`
  // goes to the client, exactly once.
  using Replicate = std::function<void(cql::SchemaLog::ReplicationChange change, cql::SchemaLogEntry entry,
                                       std::function<void(ClientResponse)> answer)>;

  // The datacenters and nodes a keyspace's replication must fit when a
  // change is checked (the topology's owners now).
  using Datacenters = std::function<cql::Datacenters()>;

  SchemaAgent(ShardEnv env, uint32_t shards, cql::SchemaLog& log, OnChange on_change, Replicate replicate,
              Datacenters datacenters);
  SchemaAgent(const SchemaAgent&) = delete;
  SchemaAgent& operator=(const SchemaAgent&) = delete;

  void Start();
  // A schema_change request from a client (perhaps forwarded by a shard).
  void OnRequest(const Envelope& message);
  // A change from this node's topology operation (its ALTER KEYSPACE),
  // appended as it is; answered exactly once, never from inside this call.
  void Submit(cql::SchemaLogEntry entry, std::function<void(ClientResponse)> answer);
  // The answer to one of this agent's own requests.
  void OnResponse(const ClientResponse& response);
  // What a peer's heartbeat says of its schema.
  void OnPeerSchema(NodeId peer, uint64_t sequence, const std::string& version);
  // What this node's heartbeats say of its schema.
  void Stamp(Heartbeat& heartbeat) const;

  // Whether this node holds as much of the log as every peer it heard
  // from, and heard from one: a new node asks to join only then, so that
  // it streams every table (core/topology/join_starter.h).
  bool HoldsPeersLog() const { return !peer_versions_.empty() && log_.sequence() >= newest_peer_sequence_; }

  // Every peer's schema version, as its last heartbeat gave it.
  const std::map<NodeId, std::string>& peer_versions() const { return peer_versions_; }

  static constexpr const char* kLocalKey = "system/schema_log";
  static constexpr Nanos kRetryDelay = 1 * kSecond;
  // Longer than the coordinator's timeouts: it answers first unless the
  // request or its answer was lost.
  static constexpr Nanos kRequestTimeout = 15 * kSecond;
  // Appends lost to other nodes' before a change gives up.
  static constexpr int kMaxAttempts = 5;

 private:
  struct Change {
    Address client;
    uint64_t request_id = 0;
    std::function<void(ClientResponse)> answer;  // set: answers this node's operation, not a client
    cql::SchemaLogEntry entry;
    int attempts = 0;
    // Checked against a log read after it arrived: a refusal then is the
    // cluster's, not this node's lag.
    bool checked_after_read = false;
  };
  enum class Step { kLoading, kIdle, kReading, kAppending, kWaiting, kSaving };

  void OnLoaded(absl::StatusOr<std::optional<std::string>> stored);
  // Keeps the log in local storage, then runs `then`.
  void Save(std::function<void()> then);
  void Next();
  void ReadLog();
  void OnLogRead(const ClientResponse& response);
  void Append(Change& change);
  void OnAppended(const ClientResponse& response);
  void Send(ClientRequest request, Step step);
  void Reply(const Change& change, ClientResponse response);
  void FailQueued(const ClientResponse& why);

  ShardEnv env_;
  const uint32_t shards_;
  cql::SchemaLog& log_;
  OnChange on_change_;
  Replicate replicate_;
  Datacenters datacenters_;
  std::deque<Change> changes_;
  std::map<NodeId, std::string> peer_versions_;
  uint64_t newest_peer_sequence_ = 0;  // the longest log a heartbeat showed
  bool read_wanted_ = false;  // the log may be longer than what we applied
  Step step_ = Step::kLoading;
  uint64_t request_id_base_ = 0;
  uint64_t sent_ = 0;
  uint64_t in_flight_ = 0;  // request id awaited (0: none)
  TimerId timeout_ = 0;
};

}  // namespace charybdis
