#include "core/shard.h"

#include "core/assert.h"

namespace charybdis {

Shard::Shard(ShardEnv env, const NodeConfig& config) : env_(env) {
  CHARYBDIS_ASSERT(env.self.node == config.id);
  CHARYBDIS_ASSERT(env.self.shard < config.shards);
  if (env.self.shard == 0) {
    failure_detector_ = std::make_unique<FailureDetector>(env, config.peers,
                                                          config.failure_detector);
  }
  env_.network->SetReceiver([this](const Envelope& message) { OnMessage(message); });
}

void Shard::Start() {
  if (failure_detector_) failure_detector_->Start();
}

void Shard::OnMessage(const Envelope& message) {
  CHARYBDIS_ASSERT(message.to_node() == env_.self.node);
  CHARYBDIS_ASSERT(message.to_shard() == env_.self.shard);
  switch (message.body_case()) {
    case Envelope::kHeartbeat:
      // Heartbeats go to shard 0 only; anything else is a sender bug.
      CHARYBDIS_ASSERT(failure_detector_ != nullptr);
      failure_detector_->OnHeartbeat(message.from_node(), message.heartbeat());
      return;
    case Envelope::kPing:
      AnswerPing(message);
      return;
    case Envelope::kPong:
    case Envelope::BODY_NOT_SET:
      break;
  }
  CHARYBDIS_ASSERT(false && "shard received a message it does not serve");
}

void Shard::AnswerPing(const Envelope& message) {
  Envelope reply;
  Pong* pong = reply.mutable_pong();
  pong->set_request_id(message.ping().request_id());
  pong->set_payload(message.ping().payload());
  env_.network->Send(Address{message.from_node(), message.from_shard()},
                     std::move(reply));
}

}  // namespace charybdis
