#pragma once

#include <cstdint>

namespace charybdis {

// splitmix64's output function: a bijective 64-bit mixer.
uint64_t Mix64(uint64_t x);

// A seeded generator of a fixed algorithm (xoshiro256**, seeded through
// splitmix64), so every platform and standard library draws the same
// numbers. Distributions are computed here too: std::*_distribution differs
// between standard libraries.
class Random {
 public:
  explicit Random(uint64_t seed);

  // A child stream that depends only on this generator's seed and `stream`,
  // not on how many numbers were drawn: adding a stream never shifts another.
  Random Fork(uint64_t stream) const;

  uint64_t Next();
  // Uniform in [0, bound). REQUIRES: bound > 0.
  uint64_t Below(uint64_t bound);
  // Uniform in [low, high]. REQUIRES: low <= high.
  int64_t Between(int64_t low, int64_t high);
  // Uniform in [0, 1).
  double Unit();
  bool Chance(double probability);
  // Exponentially distributed with the given mean (>= 0).
  double Exponential(double mean);

  uint64_t seed() const { return seed_; }

 private:
  uint64_t seed_;
  uint64_t state_[4];
};

}  // namespace charybdis
