#pragma once

#include <algorithm>
#include <vector>

#include "core/env/assert.h"
#include "core/env/random.h"
#include "core/env/time.h"
#include "proto/scenario.pb.h"
#include "sim/latency.h"

namespace charybdis::sim {

// The machine a workload's clients share (ClientMachine in
// proto/scenario.proto): each request takes a core for its share, on
// the core that frees up first, and leaves no sooner than its whole cost
// after it started.
class ClientMachine {
 public:
  explicit ClientMachine(const scenario::ClientMachine& spec)
      : spec_(spec), core_free_at_(std::max<uint32_t>(spec.cores(), 1), 0) {}

  bool modelled() const { return spec_.has_request(); }

  // When a request a client starts at `now` leaves. REQUIRES: modelled().
  Nanos SendTime(Nanos now, Random& random) {
    CHARYBDIS_ASSERT(modelled());
    const Nanos cost = DrawLatency(spec_.request(), random);
    const Nanos share = spec_.has_core_us() ? static_cast<Nanos>(spec_.core_us()) * kMicrosecond : cost;
    auto core = std::min_element(core_free_at_.begin(), core_free_at_.end());
    *core = std::max(*core, now) + share;
    return std::max(*core, now + cost);
  }

 private:
  const scenario::ClientMachine spec_;
  std::vector<Nanos> core_free_at_;  // by core
};

}  // namespace charybdis::sim
