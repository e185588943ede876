#pragma once

#include <string>

#include "proto/messages.pb.h"

namespace charybdis::sim {

// Whether a message answers a request (acks, answers, promises, ...).
bool IsReply(Envelope::BodyCase body);

// The Envelope body named by its field name ("paxos_promise"), or
// BODY_NOT_SET for an empty or unknown name.
Envelope::BodyCase EnvelopeBodyNamed(const std::string& name);

}  // namespace charybdis::sim
