#pragma once

#include "absl/synchronization/mutex.h"

namespace charybdis::node {

// Debian builds Abseil without NDEBUG, so every absl::Mutex that gRPC
// takes also records its lock order in a global graph, to abort on a
// cycle: under load that was about 5% of the machine's CPU (node and
// benchmark client alike, docs/benchmarks.md). Our own code uses
// std::mutex; gRPC's lock order is gRPC's to test. Call first in main.
inline void SkipMutexDeadlockDetection() { absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore); }

}  // namespace charybdis::node
