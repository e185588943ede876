#include "sim/envelope_kinds.h"

namespace charybdis::sim {

bool IsReply(Envelope::BodyCase body) {
  switch (body) {
    case Envelope::kPong:
    case Envelope::kClientResponse:
    case Envelope::kReplicaWriteAck:
    case Envelope::kReplicaReadResponse:
    case Envelope::kReplicaScanResponse:
    case Envelope::kPaxosPromise:
    case Envelope::kPaxosAcceptReply:
    case Envelope::kPaxosCommitAck:
      return true;
    default:
      return false;
  }
}

Envelope::BodyCase EnvelopeBodyNamed(const std::string& name) {
  if (name.empty()) return Envelope::BODY_NOT_SET;
  const google::protobuf::FieldDescriptor* field = Envelope::descriptor()->FindFieldByName(name);
  if (field == nullptr || field->containing_oneof() == nullptr) return Envelope::BODY_NOT_SET;
  return static_cast<Envelope::BodyCase>(field->number());
}

}  // namespace charybdis::sim
