#include "core/coordinator/held_for_schema.h"

#include <vector>

#include "core/env/assert.h"

namespace charybdis {

HeldForSchema::HeldForSchema(ShardEnv env, std::function<void(const Envelope&)> dispatch)
    : env_(env), dispatch_(std::move(dispatch)) {
  CHARYBDIS_ASSERT(dispatch_ != nullptr);
  // Shard 0's schema is the node's: what it does not know, no connection does.
  CHARYBDIS_ASSERT(env_.self.shard != 0);
}

void HeldForSchema::Hold(const Envelope& message) {
  CHARYBDIS_ASSERT(message.has_client_request());
  CHARYBDIS_PROBE(env_.probes, "schema.shard_behind_node");
  const uint64_t id = next_id_++;
  held_.emplace(id, message);
  env_.clock->After(kWait, [this, id] { Release(id); });
}

void HeldForSchema::ReleaseKnown(const std::function<bool(const ClientRequest&)>& known) {
  std::vector<uint64_t> ready;
  for (const auto& [id, message] : held_) {
    if (known(message.client_request())) ready.push_back(id);
  }
  for (uint64_t id : ready) Release(id);
}

void HeldForSchema::Release(uint64_t id) {
  auto it = held_.find(id);
  if (it == held_.end()) return;  // released by a schema update before its time ran out
  const Envelope message = std::move(it->second);
  held_.erase(it);
  dispatch_(message);  // may hold nothing again: the caller dispatches released requests as they are
}

}  // namespace charybdis
