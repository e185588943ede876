#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/paxos/ballot_clock.h"
#include "core/paxos/proposer_shell.h"
#include "core/request/context.h"
#include "core/schema/schema_log.h"

namespace charybdis {

// The Paxos operations of one shard's coordinator, per partition:
// conditional writes and serial reads that reach the same partition queue
// and share the next round instead of duelling with each other's ballots
// (docs/lwt.md), and a conditional write that finds nothing waiting may
// join the round still gathering its promises. Without batching
// (lwt_batching off) each operation runs its own round, as in Cassandra
// and ScyllaDB.
class LwtQueue {
 public:
  using Reply = std::function<void(ClientResponse)>;

  // `ballots`' nonce is drawn by the caller, at the shard's start.
  LwtQueue(CoordinatorContext& context, const cql::SchemaLog& schema_log, BallotClock ballots);
  LwtQueue(const LwtQueue&) = delete;
  LwtQueue& operator=(const LwtQueue&) = delete;

  // A conditional write, checked already (Coordinator::CasProblem).
  void Cas(const CasOp& op, Reply reply);
  // A SERIAL or LOCAL_SERIAL read.
  void SerialRead(const ReadOp& op, Reply reply);
  // One round among `participants` that the caller chose, not a ring: the
  // conditional write `cas`, or when it has no statement the serial read
  // `read`; a majority of them decides (the topology log's instances,
  // core/topology/topology_agent.h).
  void RunAmong(std::vector<NodeId> participants, CasOp cas, ReadOp read, Reply reply);
  // Finishes any unfinished round of a partition (a plain read met one).
  void FinishRound(Token token, const std::string& table, const std::string& partition_key,
                   std::function<void(bool ok)> done);

 private:
  struct Queued {
    bool is_read = false;
    ReadOp read;  // a serial read
    CasOp cas;    // a conditional write
    Reply reply;
  };
  // A queue is present while a round for it runs (`running`, until it has
  // answered its clients; its commit may still be on the way).
  struct PartitionQueue {
    std::vector<Queued> waiting;
    std::weak_ptr<ProposerShell> running;
  };

  void Enqueue(ConsistencyLevel serial, const std::string& table, const std::string& partition_key,
               Queued operation);
  // How many of the queued operations the next shared round takes.
  static size_t NextRoundSize(const std::vector<Queued>& queued);
  // Whether a conditional write that found its partition's round running
  // joined it (Proposer::CanJoin) instead of waiting for the next one.
  static bool JoinedRunningRound(ProposerShell* running, Queued& operation);
  // Starts the next round for a partition's queued operations.
  void RunQueued(const std::string& queue);
  // One round for `round`: serial reads of the same rows, or conditional
  // writes in arrival order. Returns RunPaxos's proposer.
  std::shared_ptr<ProposerShell> RunRound(std::vector<Queued> round, std::function<void()> after);
  // Records the round now running for `queue`, which later writes may join.
  void NoteRunning(const std::string& queue, std::shared_ptr<ProposerShell> proposer);
  // Runs one Paxos round for a partition: the conditional writes of
  // `batch` (one reply each), or a serial read when it is empty (one or
  // more replies). `after` runs once the round has answered its clients.
  // Returns the round's proposer, or null when it could not start: too few
  // replicas up, or a topology change that Paxos cannot run during.
  std::shared_ptr<ProposerShell> RunPaxos(Token token, const std::string& table,
                                          const std::string& partition_key, ConsistencyLevel serial_level,
                                          std::vector<CasOp> batch, ReadOp read, std::vector<Reply> replies,
                                          std::function<void()> after = nullptr);

  // Starts `request`'s round, or answers Unavailable when fewer of its
  // participants are up than its quorum.
  std::shared_ptr<ProposerShell> StartRound(Proposer::Request request, std::vector<Reply> replies,
                                            std::function<void()> after);
  // Answers every reply of a round that cannot start with `response`.
  std::shared_ptr<ProposerShell> Refuse(const Proposer::Request& request, const ClientResponse& response,
                                        const std::vector<Reply>& replies, const std::function<void()>& after);

  CoordinatorContext& context_;
  const cql::SchemaLog& schema_log_;
  BallotClock ballots_;
  // By (serial level, table, partition key).
  std::map<std::string, PartitionQueue> queues_;
};

}  // namespace charybdis
