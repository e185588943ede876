#pragma once

namespace charybdis::sim {

// The exit codes of `charybdis sim` (README.md), in one place.
inline constexpr int kExitPassed = 0;
inline constexpr int kExitCheckFailed = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitLiveness = 3;
inline constexpr int kExitNondeterministic = 4;

// Across runs the worst outcome wins: nondeterminism, then a failed
// check, then liveness.
inline int WorseExitCode(int a, int b) {
  auto rank = [](int code) {
    switch (code) {
      case kExitNondeterministic: return 3;
      case kExitCheckFailed: return 2;
      case kExitLiveness: return 1;
      default: return 0;
    }
  };
  return rank(a) >= rank(b) ? a : b;
}

}  // namespace charybdis::sim
