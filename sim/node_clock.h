#pragma once

#include <cstdint>

#include "core/env/time.h"

namespace charybdis::sim {

// One node's clock: local = true time * (1 + drift) + offset. Skew faults
// step the offset (possibly backwards) and change the drift.
class NodeClock {
 public:
  NodeClock() = default;
  NodeClock(Nanos offset, int32_t drift_ppm) : offset_(offset), drift_ppm_(drift_ppm) {}

  Nanos Local(Nanos true_time) const;
  // True time that passes while this clock advances by `local_delay`.
  Nanos TrueDelay(Nanos local_delay) const;

  void Step(Nanos by) { offset_ += by; }
  void set_drift_ppm(int32_t drift_ppm);

  Nanos offset() const { return offset_; }
  int32_t drift_ppm() const { return drift_ppm_; }

 private:
  Nanos offset_ = 0;
  int32_t drift_ppm_ = 0;
};

}  // namespace charybdis::sim
