#pragma once

#include <cstdint>
#include <vector>

#include "core/env/time.h"

namespace charybdis::sim {

// One node's clock: local = true time * (1 + drift) + offset. Skew faults
// step the offset (possibly backwards) and change the drift; the clock
// keeps each setting's start, so that what it read over a past window is
// known exactly, not as today's setting would have read it.
class NodeClock {
 public:
  NodeClock() : NodeClock(0, 0) {}
  NodeClock(Nanos offset, int32_t drift_ppm) : settings_{{0, offset, drift_ppm}} {}

  Nanos Local(Nanos true_time) const { return Reading(settings_.back(), true_time); }
  // True time that passes while this clock advances by `local_delay`.
  Nanos TrueDelay(Nanos local_delay) const;

  // From true time `at` on (no earlier than the last adjustment): the
  // offset moves by `step` and the drift becomes `drift_ppm`.
  void Adjust(Nanos at, Nanos step, int32_t drift_ppm);

  // The earliest and the latest reading of the clock over true times
  // [from, to], under the settings it had then.
  struct Range {
    Nanos earliest = 0;
    Nanos latest = 0;
  };
  Range Over(Nanos from, Nanos to) const;

  Nanos offset() const { return settings_.back().offset; }
  int32_t drift_ppm() const { return settings_.back().drift_ppm; }

 private:
  struct Setting {
    Nanos since = 0;  // true time
    Nanos offset = 0;
    int32_t drift_ppm = 0;
  };
  static Nanos Reading(const Setting& setting, Nanos true_time);

  std::vector<Setting> settings_;  // by `since`; the last is the current one
};

}  // namespace charybdis::sim
