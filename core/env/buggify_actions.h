#pragma once

#include <string_view>

#include "core/env/shard_env.h"
#include "core/env/time.h"

namespace charybdis {

// What a firing Buggify site may do: only what the environment could do
// anyway, so no contract breaks. A slow or duplicating network, a peer
// that answers late, a timer that runs early.

// Sends `message` to `to`; when `site` fires, 1 to 20 ms late (a slow link;
// later messages may overtake it).
void SendPerhapsLate(const ShardEnv& env, std::string_view site, const Address& to,
                     Envelope message);

// Sends `message` to `to`; when `site` fires, twice (a duplicating network).
void SendPerhapsTwice(const ShardEnv& env, std::string_view site, const Address& to,
                      Envelope message);

// `duration`, or when `site` fires a tenth of it (at least 1 ms): a timeout
// that expires early looks to the caller like a peer that is slow.
Nanos PerhapsShorter(const ShardEnv& env, std::string_view site, Nanos duration);

}  // namespace charybdis
