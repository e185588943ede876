#pragma once

#include "core/env/address.h"
#include "core/env/buggify.h"
#include "core/env/clock.h"
#include "core/env/network.h"
#include "core/env/probe.h"
#include "core/env/random.h"
#include "core/env/reactor.h"
#include "core/env/storage.h"

namespace charybdis {

// Everything a shard may use of the world. The runtime (sim/ or node/) owns
// the pointees and keeps them alive for the shard's lifetime.
struct ShardEnv {
  Address self;
  Clock* clock = nullptr;
  Network* network = nullptr;
  Storage* storage = nullptr;
  Random* random = nullptr;
  Buggify* buggify = nullptr;
  Probes* probes = NoProbes::Instance();
  Reactor* reactor = nullptr;
};

}  // namespace charybdis
