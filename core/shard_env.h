#pragma once

#include "core/address.h"
#include "core/buggify.h"
#include "core/clock.h"
#include "core/network.h"
#include "core/probe.h"
#include "core/random.h"
#include "core/reactor.h"
#include "core/storage.h"

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
