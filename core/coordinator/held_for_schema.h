#pragma once

#include <cstdint>
#include <functional>
#include <map>

#include "core/env/shard_env.h"
#include "proto/messages.pb.h"

namespace charybdis {

// Client requests for a table this shard does not know yet. A shard other
// than 0 learns each schema change from shard 0, a message later than the
// node's CQL connections do (they read shard 0's schema): a request
// planned against the newer schema may reach the shard first. It waits
// for the shard's schema to catch up, kWait at most, and then runs, or is
// refused as naming an unknown table, as it would have been at once.
class HeldForSchema {
 public:
  static constexpr Nanos kWait = kSecond;

  // `dispatch` runs a released request.
  HeldForSchema(ShardEnv env, std::function<void(const Envelope&)> dispatch);

  void Hold(const Envelope& message);
  // After a schema update: runs the held requests that `known` says this
  // shard can now serve; the others wait on.
  void ReleaseKnown(const std::function<bool(const ClientRequest&)>& known);
  size_t size() const { return held_.size(); }

 private:
  void Release(uint64_t id);

  ShardEnv env_;
  std::function<void(const Envelope&)> dispatch_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, Envelope> held_;  // by arrival
};

}  // namespace charybdis
