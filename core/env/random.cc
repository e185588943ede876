#include "core/env/random.h"

#include <cmath>

#include "core/env/assert.h"

namespace charybdis {

uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

Random::Random(uint64_t seed) : seed_(seed) {
  // The state is four consecutive outputs of splitmix64 started at `seed`,
  // as the xoshiro authors recommend.
  uint64_t x = seed;
  for (uint64_t& word : state_) {
    word = Mix64(x);
    x += 0x9e3779b97f4a7c15ULL;
  }
}

Random Random::Fork(uint64_t stream) const {
  return Random(Mix64(seed_ ^ Mix64(stream + 0x632be59bd9b4e019ULL)));
}

static uint64_t RotateLeft(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t Random::Next() {
  const uint64_t result = RotateLeft(state_[1] * 5, 7) * 9;
  const uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = RotateLeft(state_[3], 45);
  return result;
}

uint64_t Random::Below(uint64_t bound) {
  CHARYBDIS_ASSERT(bound > 0);
  // Lemire's multiply-shift with rejection: unbiased and division-free on
  // the common path.
  __uint128_t product = static_cast<__uint128_t>(Next()) * bound;
  uint64_t low = static_cast<uint64_t>(product);
  if (low < bound) {
    const uint64_t threshold = -bound % bound;
    while (low < threshold) {
      product = static_cast<__uint128_t>(Next()) * bound;
      low = static_cast<uint64_t>(product);
    }
  }
  return static_cast<uint64_t>(product >> 64);
}

int64_t Random::Between(int64_t low, int64_t high) {
  CHARYBDIS_ASSERT(low <= high);
  const uint64_t span = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  if (span == UINT64_MAX) return static_cast<int64_t>(Next());
  return static_cast<int64_t>(static_cast<uint64_t>(low) + Below(span + 1));
}

double Random::Unit() {
  // 53 random bits: every value is exactly representable.
  return static_cast<double>(Next() >> 11) * 0x1.0p-53;
}

bool Random::Chance(double probability) {
  if (probability <= 0) return false;
  if (probability >= 1) return true;
  return Unit() < probability;
}

double Random::Exponential(double mean) {
  CHARYBDIS_ASSERT(mean >= 0);
  if (mean == 0) return 0;
  return -std::log1p(-Unit()) * mean;
}

}  // namespace charybdis
