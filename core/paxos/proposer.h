#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/cluster/liveness.h"
#include "core/data/partition.h"
#include "core/data/token.h"
#include "core/env/clock.h"
#include "core/env/probe.h"
#include "core/paxos/ballot_clock.h"
#include "core/paxos/row_spans.h"
#include "core/telemetry/metrics.h"

namespace charybdis {

// What a proposer wants done, in the order it wants it. The proposer never
// performs an effect: the shell that steps it (core/paxos/proposer_shell.h)
// drains its outbox after each step, in the spirit of ScyllaDB's raft fsm.
struct ProposerEffect {
  enum class Kind {
    kTrack,     // route answers carrying `id` to this proposer
    kSend,      // `message` to replica `to`, with the Buggify fault `fault`
    kPrune,     // `prunes`, unless the prune Buggify site fires; counts `operations`
    kReply,     // `response` to client `client`
    kBackOff,   // wait a random time up to `backoff_ceiling`, then Retry
    kAnswered,  // every client has its answer: the partition's next round may start
    kDone,      // nothing left to see through: forget `ids`, stop the timeout
  };
  enum class Fault { kNone, kPerhapsLate, kPerhapsTwice };

  Kind kind = Kind::kDone;
  uint64_t id = 0;
  NodeId to = 0;
  Envelope message;
  Fault fault = Fault::kNone;
  std::string_view site;  // of `fault`
  std::vector<std::pair<NodeId, Envelope>> prunes;
  size_t operations = 0;
  size_t client = 0;
  ClientResponse response;
  Nanos backoff_ceiling = 0;
  std::vector<uint64_t> ids;
};

// What a proposer reads as it decides. Nothing is sent, stored or timed
// through it.
struct ProposerView {
  const Clock* clock = nullptr;  // Now() only
  const LivenessView* liveness = nullptr;
  BallotClock* ballots = nullptr;
  std::function<uint64_t()> next_request_id;
  ShardMetrics* metrics = nullptr;
  Probes* probes = nullptr;
};

// One conditional write or serial read on its coordinator: Paxos among the
// partition's replicas (see docs/lwt.md), as a state machine stepped one
// message at a time. Uncontended, a conditional write takes two round
// trips (prepare with the read folded in, accept) and a serial read one;
// the commit goes out after the answer.
class Proposer {
 public:
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
    // The topology version that chose them, which prepares and accepts
    // carry to the replicas' fence; 0: not chosen by the ring (the
    // topology and schema logs' rounds), never fenced.
    uint64_t topology_version = 0;
    ConsistencyLevel serial_level = CL_SERIAL;
    // Conditional writes on the partition, in arrival order, sharing this
    // round: each is evaluated on the state the ones before it left, and
    // gets its own answer. Empty: a serial read.
    std::vector<CasOp> batch;
    // For a serial read: the rows to answer with.
    ReadOp read;
  };

  // `clients`: one per conditional write of the batch (one or more for a
  // serial read, each answered with its result), numbered from 0 in
  // kReply effects.
  Proposer(ProposerView view, Request request, size_t clients);

  void Start();
  void OnPromise(NodeId replica, const PaxosPromise& promise);
  void OnAcceptReply(NodeId replica, const PaxosAcceptReply& reply);
  void OnCommitAck(NodeId replica, const PaxosCommitAck& ack);
  // The back-off of a kBackOff effect is over.
  void Retry();
  void OnTimeout();

  // Whether a conditional write that arrived after this round's prepare
  // went out may still join it: the round is the proposer's first, a
  // write round waiting for its promises, and its prepare reads the rows
  // `op` writes. Only the first: a write that joins shares the proposer's
  // timeout, which started with it, and a proposer that runs again for
  // late writes takes no more, so that a stream of retried writes cannot
  // keep one proposer going until everyone in it times out. Such a write
  // is linearized at the round's accept, which comes after it arrived; a
  // round that ends without an accept runs again for the writes that
  // joined late.
  bool CanJoin(const CasOp& op) const;
  // Returns the client number of the write's answer.
  size_t Join(CasOp op);

  // The effects wanted since the last call, in order.
  std::vector<ProposerEffect> TakeOutbox();

  const std::vector<CasOp>& batch() const { return request_.batch; }
  const Request& request() const { return request_; }
  // Every client of the round has its answer.
  bool answered() const { return replied_; }
  bool done() const { return phase_ == Phase::kDone; }
  const Ballot& ballot() const { return ballot_; }

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
  void Propose(const PartitionData& mutation, bool finishing, const Ballot& origin);
  // A quorum accepted the proposal.
  void Chosen();
  void Commit(const Proposal& proposal);
  // Commits up to `ballot` are durable on a quorum: replicas may drop them.
  // `operations`: how many of the batch this round answers now (each
  // counts once in cas_prune); all of them unless said.
  void Prune(const Ballot& ballot, std::optional<size_t> operations = std::nullopt);
  void AnswerUncertain(const char* message);
  // Ends the operation as a timeout does (uncertain if an accept of its
  // own value went out), saying `why`.
  void GiveUp(const char* why);
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
  // Marks every client answered (once).
  void NoteAnswered();
  bool is_read() const { return request_.batch.empty(); }
  void SeeBallot(const Ballot& ballot) { view_.ballots->See(ballot); }
  uint64_t NewRoundId();
  std::vector<NodeId> LiveParticipants() const;
  Nanos Now() const { return view_.clock->Now(); }
  void Send(NodeId to, Envelope message, ProposerEffect::Fault fault = ProposerEffect::Fault::kNone,
            std::string_view site = {});
  void Reply(size_t client, ClientResponse response);

  ProposerView view_;
  Request request_;
  // The clients still waiting, in batch order (for a read, every reader).
  std::vector<size_t> clients_;
  size_t next_client_ = 0;
  std::vector<ProposerEffect> outbox_;
  // Answers decided by the evaluation, sent once the round's fate is known.
  std::vector<ClientResponse> answers_;
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
};

}  // namespace charybdis
