#pragma once

#include <cstdint>
#include <functional>

#include "core/env/time.h"

namespace charybdis {

using TimerId = uint64_t;

// A shard's view of time. Now() is this node's clock (it may be offset,
// drift, or step backwards: it stands for the wall clock that timestamps
// writes and ballots). Timer delays are measured on the same clock's rate
// but are immune to steps, like a monotonic timer.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual Nanos Now() const = 0;
  // Runs `fn` on the shard's reactor after `delay` (>= 0) has passed.
  virtual TimerId After(Nanos delay, std::function<void()> fn) = 0;
  // Cancelling a timer that already fired (or an unknown id) does nothing.
  virtual void Cancel(TimerId id) = 0;
};

}  // namespace charybdis
