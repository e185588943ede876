#include "core/env/buggify_actions.h"

#include <algorithm>

namespace charybdis {

void SendPerhapsLate(const ShardEnv& env, std::string_view site, const Address& to,
                     Envelope message) {
  if (!env.buggify->Fires(site)) {
    env.network->Send(to, std::move(message));
    return;
  }
  const Nanos delay = static_cast<Nanos>(1 + env.random->Below(20)) * kMillisecond;
  // The network outlives every request of the shard: capture it, not them.
  Network* network = env.network;
  env.clock->After(delay, [network, to, message = std::move(message)]() mutable {
    network->Send(to, std::move(message));
  });
}

void SendPerhapsTwice(const ShardEnv& env, std::string_view site, const Address& to,
                      Envelope message) {
  if (env.buggify->Fires(site)) env.network->Send(to, message);
  env.network->Send(to, std::move(message));
}

Nanos PerhapsShorter(const ShardEnv& env, std::string_view site, Nanos duration) {
  if (!env.buggify->Fires(site)) return duration;
  return std::max<Nanos>(duration / 10, kMillisecond);
}

}  // namespace charybdis
