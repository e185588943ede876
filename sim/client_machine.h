#pragma once

#include <algorithm>
#include <vector>

#include "core/assert.h"
#include "core/random.h"
#include "core/time.h"
#include "proto/scenario.pb.h"
#include "sim/latency.h"

namespace charybdis::sim {

// The CPU of the machine a workload's clients share (ClientMachine in
// proto/scenario.proto): each request takes a core for its cost, on the
// core that frees up first.
class ClientMachine {
 public:
  explicit ClientMachine(const scenario::ClientMachine& spec)
      : spec_(spec), core_free_at_(std::max<uint32_t>(spec.cores(), 1), 0) {}

  bool modelled() const { return spec_.has_request(); }

  // When a request a client starts at `now` is done with its CPU work and
  // leaves. REQUIRES: modelled().
  Nanos SendTime(Nanos now, Random& random) {
    CHARYBDIS_ASSERT(modelled());
    auto core = std::min_element(core_free_at_.begin(), core_free_at_.end());
    *core = std::max(*core, now) + DrawLatency(spec_.request(), random);
    return *core;
  }

 private:
  const scenario::ClientMachine spec_;
  std::vector<Nanos> core_free_at_;  // by core
};

}  // namespace charybdis::sim
