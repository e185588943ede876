#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "core/paxos/proposer.h"
#include "core/request/context.h"
#include "core/request/pending_request.h"

namespace charybdis {

// The thin shell around a Proposer: routes the replicas' answers to it,
// runs its timeout and back-off timers, and performs what each step put in
// its outbox, in order (sends, with their Buggify faults; answers; the
// ids it tracks and forgets).
class ProposerShell final : public PendingRequest, public std::enable_shared_from_this<ProposerShell> {
 public:
  using Reply = std::function<void(ClientResponse)>;

  // `replies`: one per conditional write of the batch (one or more for a
  // serial read). `answered` runs once every client has its answer, which
  // may be before the commit is in: the partition's next round may start
  // then (its prepare follows the commit to each replica, whose acceptor
  // decides on a partition in arrival order).
  ProposerShell(CoordinatorContext& context, BallotClock& ballots, Proposer::Request request,
                std::vector<Reply> replies, std::function<void()> answered);

  void Start();
  bool CanJoin(const CasOp& op) const { return proposer_.CanJoin(op); }
  void Join(CasOp op, Reply reply);
  const std::vector<CasOp>& batch() const { return proposer_.batch(); }
  bool answered() const { return proposer_.answered(); }

  void OnWriteAck(NodeId, bool) override {}
  void OnReadResponse(NodeId, const ReplicaReadResponse&) override {}
  void OnPromise(NodeId replica, const PaxosPromise& promise) override;
  void OnAcceptReply(NodeId replica, const PaxosAcceptReply& reply) override;
  void OnCommitAck(NodeId replica, const PaxosCommitAck& ack) override;

 private:
  // Performs the outbox of the step just taken.
  void Drain();
  void Perform(ProposerEffect& effect);
  void Send(ProposerEffect& effect);
  void BackOff(Nanos ceiling);

  CoordinatorContext& context_;
  Proposer proposer_;
  std::vector<Reply> replies_;  // by client number
  std::function<void()> answered_;
  TimerId timeout_timer_ = 0;
};

}  // namespace charybdis
