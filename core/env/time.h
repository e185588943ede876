#pragma once

#include <cstdint>

namespace charybdis {

// All time in core/ is an integer count of nanoseconds from the injected
// clock; nothing reads the wall clock.
using Nanos = int64_t;

constexpr Nanos kMicrosecond = 1'000;
constexpr Nanos kMillisecond = 1'000'000;
constexpr Nanos kSecond = 1'000'000'000;

}  // namespace charybdis
