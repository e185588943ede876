#include "sim/node_clock.h"

#include <algorithm>

#include "core/env/assert.h"

namespace charybdis::sim {

namespace {
constexpr int64_t kPerMillion = 1'000'000;
}

Nanos NodeClock::Reading(const Setting& setting, Nanos true_time) {
  const __int128 drifted = static_cast<__int128>(true_time) * setting.drift_ppm / kPerMillion;
  return true_time + static_cast<Nanos>(drifted) + setting.offset;
}

Nanos NodeClock::TrueDelay(Nanos local_delay) const {
  CHARYBDIS_ASSERT(local_delay >= 0);
  // Round up, so a timer never fires before its local delay has passed.
  const __int128 scaled = static_cast<__int128>(local_delay) * kPerMillion;
  const int64_t rate = kPerMillion + drift_ppm();
  return static_cast<Nanos>((scaled + rate - 1) / rate);
}

void NodeClock::Adjust(Nanos at, Nanos step, int32_t drift_ppm) {
  // A clock that stops or runs backwards is not a clock.
  CHARYBDIS_ASSERT(drift_ppm > -kPerMillion / 2);
  CHARYBDIS_ASSERT(drift_ppm < kPerMillion / 2);
  CHARYBDIS_ASSERT(at >= settings_.back().since);
  settings_.push_back({at, offset() + step, drift_ppm});
}

NodeClock::Range NodeClock::Over(Nanos from, Nanos to) const {
  CHARYBDIS_ASSERT(from <= to);
  Range range{INT64_MAX, INT64_MIN};
  // Each setting reads monotonically over its span: its extremes are at
  // the span's ends within [from, to]. The span of setting i ends where
  // i + 1 begins; its reading there bounds what it read just before.
  for (size_t i = 0; i < settings_.size(); i++) {
    const Nanos begin = std::max(from, settings_[i].since);
    const Nanos end = i + 1 < settings_.size() ? std::min(to, settings_[i + 1].since) : to;
    if (begin > end) continue;
    for (Nanos at : {begin, end}) {
      const Nanos reading = Reading(settings_[i], at);
      range.earliest = std::min(range.earliest, reading);
      range.latest = std::max(range.latest, reading);
    }
  }
  CHARYBDIS_ASSERT(range.earliest <= range.latest);  // some setting covers `to`
  return range;
}

}  // namespace charybdis::sim
