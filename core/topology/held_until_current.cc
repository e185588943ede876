#include "core/topology/held_until_current.h"

#include <utility>

#include "core/env/assert.h"

namespace charybdis::topology {

HeldUntilCurrent::HeldUntilCurrent(std::function<void(const Envelope&)> dispatch) : dispatch_(std::move(dispatch)) {
  CHARYBDIS_ASSERT(dispatch_ != nullptr);
}

void HeldUntilCurrent::Take(const Envelope& message) {
  CHARYBDIS_ASSERT(message.has_client_request());
  if (current_) return dispatch_(message);
  held_.push_back(message);
}

void HeldUntilCurrent::BecomeCurrent() {
  if (current_) return;
  current_ = true;
  std::vector<Envelope> held = std::move(held_);
  held_.clear();
  for (const Envelope& message : held) dispatch_(message);
}

}  // namespace charybdis::topology
