#include "core/paxos/proposer_shell.h"

#include "core/env/assert.h"
#include "core/env/buggify_actions.h"

namespace charybdis {

ProposerShell::ProposerShell(CoordinatorContext& context, BallotClock& ballots, Proposer::Request request,
                             std::vector<Reply> replies, std::function<void()> answered)
    : context_(context),
      proposer_(ProposerView{context.env.clock, &context.liveness, &ballots,
                             [&context] { return context.NextRequestId(); }, &context.metrics,
                             context.env.probes},
                std::move(request), replies.size()),
      replies_(std::move(replies)),
      answered_(std::move(answered)) {
  CHARYBDIS_ASSERT(!replies_.empty());
}

void ProposerShell::Start() {
  CHARYBDIS_ASSERT(timeout_timer_ == 0);  // started once
  std::weak_ptr<ProposerShell> self = weak_from_this();
  timeout_timer_ = context_.env.clock->After(context_.config.coordinator.write_timeout, [self] {
    if (auto shell = self.lock()) {
      shell->proposer_.OnTimeout();
      shell->Drain();
    }
  });
  proposer_.Start();
  Drain();
}

void ProposerShell::Join(CasOp op, Reply reply) {
  const size_t client = proposer_.Join(std::move(op));
  CHARYBDIS_ASSERT(client == replies_.size());
  replies_.push_back(std::move(reply));
  CHARYBDIS_ASSERT(proposer_.TakeOutbox().empty());  // joining sends nothing
}

void ProposerShell::OnPromise(NodeId replica, const PaxosPromise& promise) {
  proposer_.OnPromise(replica, promise);
  Drain();
}

void ProposerShell::OnAcceptReply(NodeId replica, const PaxosAcceptReply& reply) {
  proposer_.OnAcceptReply(replica, reply);
  Drain();
}

void ProposerShell::OnCommitAck(NodeId replica, const PaxosCommitAck& ack) {
  proposer_.OnCommitAck(replica, ack);
  Drain();
}

void ProposerShell::Drain() {
  // Performing an effect may drop the last reference to this shell (kDone
  // forgets its ids): hold one until the outbox is done.
  std::shared_ptr<ProposerShell> keep = shared_from_this();
  for (std::vector<ProposerEffect> effects = proposer_.TakeOutbox(); !effects.empty();
       effects = proposer_.TakeOutbox()) {
    for (ProposerEffect& effect : effects) Perform(effect);
  }
}

void ProposerShell::Perform(ProposerEffect& effect) {
  switch (effect.kind) {
    case ProposerEffect::Kind::kTrack:
      CHARYBDIS_ASSERT(effect.id != 0);
      return context_.track(effect.id, shared_from_this());
    case ProposerEffect::Kind::kSend:
      return Send(effect);
    case ProposerEffect::Kind::kPrune:
      // Pruning only saves space: skipping it leaves state a later round reads.
      if (context_.env.buggify->Fires("paxos.proposer.skip_prune")) return;
      context_.metrics.cas_prune += effect.operations;
      for (auto& [node, message] : effect.prunes) {
        context_.SendToReplica(node, proposer_.request().token, std::move(message));
      }
      return;
    case ProposerEffect::Kind::kReply:
      CHARYBDIS_ASSERT(effect.client < replies_.size());
      return replies_[effect.client](std::move(effect.response));
    case ProposerEffect::Kind::kBackOff:
      return BackOff(effect.backoff_ceiling);
    case ProposerEffect::Kind::kAnswered:
      if (auto answered = std::exchange(answered_, nullptr)) answered();
      return;
    case ProposerEffect::Kind::kDone:
      context_.env.clock->Cancel(timeout_timer_);
      for (uint64_t id : effect.ids) context_.forget(id);
      return;
  }
}

void ProposerShell::Send(ProposerEffect& effect) {
  CHARYBDIS_ASSERT(effect.message.body_case() != Envelope::BODY_NOT_SET);
  const Address to = context_.ReplicaAddress(effect.to, proposer_.request().token);
  CHARYBDIS_ASSERT(to.shard < context_.config.shards);
  switch (effect.fault) {
    case ProposerEffect::Fault::kNone:
      return context_.env.network->Send(to, std::move(effect.message));
    case ProposerEffect::Fault::kPerhapsLate:
      return SendPerhapsLate(context_.env, effect.site, to, std::move(effect.message));
    case ProposerEffect::Fault::kPerhapsTwice:
      return SendPerhapsTwice(context_.env, effect.site, to, std::move(effect.message));
  }
}

void ProposerShell::BackOff(Nanos ceiling) {
  CHARYBDIS_ASSERT(ceiling > 0);
  ceiling = PerhapsShorter(context_.env, "paxos.proposer.short_backoff", ceiling);
  const Nanos wait = static_cast<Nanos>(context_.env.random->Below(static_cast<uint64_t>(ceiling) + 1));
  CHARYBDIS_ASSERT(wait <= ceiling);
  std::weak_ptr<ProposerShell> self = weak_from_this();
  context_.env.clock->After(wait, [self] {
    if (auto shell = self.lock()) {
      shell->proposer_.Retry();
      shell->Drain();
    }
  });
}

}  // namespace charybdis
