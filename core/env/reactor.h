#pragma once

#include <functional>

namespace charybdis {

// The single-threaded event loop of one shard. Every callback of a shard
// (timers, storage completions, inbound messages, posted work) runs here, one
// at a time, so core/ code takes no locks.
class Reactor {
 public:
  virtual ~Reactor() = default;
  // Runs `fn` later on this reactor, after what the same thread posted
  // before it. Work posted from other threads meanwhile may run before or
  // after it (the real shard thread runs its own posts within the turn).
  virtual void Post(std::function<void()> fn) = 0;
};

}  // namespace charybdis
