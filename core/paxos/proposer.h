#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "core/coordinator/context.h"
#include "core/coordinator/pending_request.h"
#include "core/data/partition.h"

namespace charybdis {

// One conditional write or serial read on its coordinator: Paxos among the
// partition's replicas (see docs/lwt.md). Uncontended, a conditional write
// takes two round trips (prepare with the read folded in, accept) and a
// serial read one; the commit goes out after the answer.
class Proposer final : public PendingRequest, public std::enable_shared_from_this<Proposer> {
 public:
  using Reply = std::function<void(ClientResponse)>;
  // Tracks an extra request id (one per round) for this proposer.
  using Track = std::function<void(uint64_t id, std::shared_ptr<PendingRequest>)>;

  struct Request {
    Token token = 0;
    std::string table;
    std::string partition_key;
    // Every replica of the partition (its keyspace's, when the round
    // started): who gets the commit and the prune.
    std::vector<NodeId> replicas;
    // Paxos participants (all replicas for SERIAL, the local ones for
    // LOCAL_SERIAL) and how many must answer.
    std::vector<NodeId> participants;
    uint32_t quorum = 0;
    ConsistencyLevel serial_level = CL_SERIAL;
    // Conditional writes on the partition, in arrival order, sharing this
    // round: each is evaluated on the state the ones before it left, and
    // gets its own answer. Empty: a serial read.
    std::vector<CasOp> batch;
    // For a serial read: the rows to answer with.
    ReadOp read;
  };

  // `replies`: one per conditional write of the batch (one for a serial
  // read). `answered` runs once every client has its answer, which may be
  // before the commit is in: the partition's next round may start then (its
  // prepare follows the commit to each replica, whose acceptor decides on
  // a partition in arrival order). `done` gets every request id this
  // proposer used, to forget them, once nothing is left to see through.
  Proposer(CoordinatorContext& context, Request request, Track track, std::vector<Reply> replies,
           std::function<void()> answered, std::function<void(const std::vector<uint64_t>& ids)> done);

  void Start();
  // Whether a conditional write that arrived after this round's prepare
  // went out may still join it: the round is the proposer's first, a
  // write round waiting for its promises, and its prepare reads the rows
  // `op` writes. Only the first: a write that joins shares the proposer's
  // timeout, which started with it, and a proposer that runs again for
  // late writes takes no more, so that a stream of retried writes cannot
  // keep one proposer going until everyone in it times out. Such a write is linearized at
  // the round's accept, which comes after it arrived; a round that ends
  // without an accept runs again for the writes that joined late.
  bool CanJoin(const CasOp& op) const;
  void Join(CasOp op, Reply reply);
  const std::vector<CasOp>& batch() const { return request_.batch; }
  // Every client of the round has its answer.
  bool answered() const { return replied_; }
  void OnWriteAck(NodeId, bool) override {}
  void OnReadResponse(NodeId, const ReplicaReadResponse&) override {}
  void OnPromise(NodeId replica, const PaxosPromise& promise) override;
  void OnAcceptReply(NodeId replica, const PaxosAcceptReply& reply) override;
  void OnCommitAck(NodeId replica, const PaxosCommitAck& ack) override;

 private:
  enum class Phase { kIdle, kPreparing, kRepairing, kAccepting, kCommitting, kDone };

  void NewRound();
  void BackOffAndRetry();
  void Decide();
  // Sends the newest commit to the promisers that lack it (phase
  // kRepairing); false when every promiser has it.
  bool RepairMissingCommit(const Proposal& latest_commit, const Partition& current);
  void Evaluate(const Partition& current, const Proposal* latest_commit);
  // After a partial accept of our own value: what this round's quorum says
  // about its fate (see docs/lwt.md). False when the round went on to
  // re-propose it or to answer.
  bool ResolveUncertainValue(const Proposal* latest_commit);
  void Propose(PartitionData mutation, bool finishing, const Ballot& origin);
  // A quorum accepted the proposal.
  void Chosen();
  void Commit(const Proposal& proposal);
  // Commits up to `ballot` are durable on a quorum: replicas may drop them.
  // `operations`: how many of the batch this round answers now (each
  // counts once in cas_prune); all of them unless said.
  void Prune(const Ballot& ballot, std::optional<size_t> operations = std::nullopt);
  void AnswerUncertain(const char* message);
  // Sends `response` to every waiting client (if none was answered yet),
  // then forgets this proposer.
  void Finish(ClientResponse response);
  // Sends every conditional write of the batch its evaluated answer.
  void AnswerWrites();
  // Sends the first `count` writes of the batch their evaluated answers.
  void AnswerFirst(size_t count);
  // A round where no condition held answers the writes that were there
  // before its prepare and runs again for the ones that joined late.
  void AnswerEarlyAndRetryLate();
  bool is_read() const { return request_.batch.empty(); }
  void OnTimeout();
  void SeeBallot(const Ballot& ballot);
  // What the prepare asks replicas to read, one span per operation,
  // sorted and disjoint; empty: the whole partition.
  std::vector<RowSpan> RowsRead() const;
  uint64_t NewRoundId();
  std::vector<NodeId> LiveParticipants() const;

  CoordinatorContext& context_;
  Request request_;
  Track track_;
  std::vector<Reply> replies_;
  // Answers decided by the evaluation, sent once the round's fate is known.
  std::vector<ClientResponse> answers_;
  // Marks every client answered, and runs `answered_` (once).
  void NoteAnswered();
  std::function<void()> answered_;
  std::function<void(const std::vector<uint64_t>&)> done_;
  std::vector<uint64_t> round_ids_;
  // The prepare of the current round: what it reads, and how many of the
  // batch's writes were there when it went out (the rest joined late).
  std::vector<RowSpan> rows_read_;
  size_t joined_before_prepare_ = 0;

  Phase phase_ = Phase::kIdle;
  Nanos started_ = 0;
  uint32_t attempts_ = 0;
  uint32_t round_trips_ = 0;
  uint64_t round_id_ = 0;
  Ballot ballot_;
  bool finishing_ = false;  // proposing someone else's accepted value
  Proposal proposal_;
  // Our own value (as evaluated, before restamping), the latest commit it
  // was evaluated on, and — once a minority accepted it — its origin, until
  // a later round learns whether it was chosen.
  PartitionData own_mutation_;
  std::optional<Ballot> evaluated_on_;
  std::optional<Ballot> uncertain_origin_;
  std::map<NodeId, PaxosPromise> promises_;
  std::set<NodeId> accepted_;
  std::set<NodeId> refused_;
  std::set<NodeId> repairing_;
  std::set<NodeId> committed_;
  bool replied_ = false;
  TimerId timeout_timer_ = 0;
};

}  // namespace charybdis
