#pragma once

#include "core/env/random.h"
#include "core/env/time.h"
#include "proto/scenario.pb.h"

namespace charybdis::sim {

// min + exponential jitter, as configured by a scenario's Latency message.
inline Nanos DrawLatency(const scenario::Latency& latency, Random& random) {
  const double jitter_us = random.Exponential(static_cast<double>(latency.jitter_mean_us()));
  return static_cast<Nanos>(latency.min_us()) * kMicrosecond +
         static_cast<Nanos>(jitter_us * kMicrosecond);
}

}  // namespace charybdis::sim
