#include "sim/node_clock.h"

#include "core/env/assert.h"

namespace charybdis::sim {

namespace {
constexpr int64_t kPerMillion = 1'000'000;
}

Nanos NodeClock::Local(Nanos true_time) const {
  const __int128 drifted = static_cast<__int128>(true_time) * drift_ppm_ / kPerMillion;
  return true_time + static_cast<Nanos>(drifted) + offset_;
}

Nanos NodeClock::TrueDelay(Nanos local_delay) const {
  CHARYBDIS_ASSERT(local_delay >= 0);
  // Round up, so a timer never fires before its local delay has passed.
  const __int128 scaled = static_cast<__int128>(local_delay) * kPerMillion;
  const int64_t rate = kPerMillion + drift_ppm_;
  return static_cast<Nanos>((scaled + rate - 1) / rate);
}

void NodeClock::set_drift_ppm(int32_t drift_ppm) {
  // A clock that stops or runs backwards is not a clock.
  CHARYBDIS_ASSERT(drift_ppm > -kPerMillion / 2);
  CHARYBDIS_ASSERT(drift_ppm < kPerMillion / 2);
  drift_ppm_ = drift_ppm;
}

}  // namespace charybdis::sim
