#pragma once

#include <functional>
#include "proto/messages.pb.h"
#include "proto/scenario.pb.h"
#include "sim/sim_storage.h"

namespace charybdis::sim {

// A crash point armed on a node (CrashPointFault in proto/scenario.proto):
// the node crashes at the first moment of this kind.
struct CrashPoint {
  scenario::CrashPointFault::Point point = scenario::CrashPointFault::POINT_UNSET;
  // AFTER_REPLY: only replies of this kind (BODY_NOT_SET: any reply).
  Envelope::BodyCase reply = Envelope::BODY_NOT_SET;
  CrashKind kind = CrashKind::kCrash;
  // Asked when a moment comes; false lets it pass and the point stays armed.
  std::function<bool()> allowed;
  // Runs once the event in which the moment came returns: it crashes the
  // node (and may plan its restart).
  std::function<void()> fire;
};

}  // namespace charybdis::sim
