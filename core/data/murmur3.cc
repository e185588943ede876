#include "core/data/murmur3.h"

#include <cstring>

namespace charybdis {

namespace {

constexpr uint64_t kC1 = 0x87c37b91114253d5ULL;
constexpr uint64_t kC2 = 0x4cf5ad432745937fULL;

uint64_t RotateLeft(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

uint64_t FinalMix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

uint64_t LittleEndian64(const unsigned char* p) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; i--) value = (value << 8) | p[i];
  return value;
}

// The quirk: Java's ByteBuffer.get returns a signed byte, widened to long.
uint64_t SignExtended(unsigned char byte) {
  return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int8_t>(byte)));
}

}  // namespace

Hash128 CassandraMurmur3(std::string_view bytes, uint64_t seed) {
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t length = bytes.size();
  const size_t blocks = length / 16;
  uint64_t h1 = seed;
  uint64_t h2 = seed;

  for (size_t i = 0; i < blocks; i++) {
    uint64_t k1 = LittleEndian64(data + i * 16);
    uint64_t k2 = LittleEndian64(data + i * 16 + 8);
    k1 *= kC1;
    k1 = RotateLeft(k1, 31);
    k1 *= kC2;
    h1 ^= k1;
    h1 = RotateLeft(h1, 27);
    h1 += h2;
    h1 = h1 * 5 + 0x52dce729;
    k2 *= kC2;
    k2 = RotateLeft(k2, 33);
    k2 *= kC1;
    h2 ^= k2;
    h2 = RotateLeft(h2, 31);
    h2 += h1;
    h2 = h2 * 5 + 0x38495ab5;
  }

  const unsigned char* tail = data + blocks * 16;
  const size_t rest = length & 15;
  uint64_t k1 = 0;
  uint64_t k2 = 0;
  for (size_t i = rest; i > 8; i--) k2 ^= SignExtended(tail[i - 1]) << ((i - 9) * 8);
  if (rest > 8) {
    k2 *= kC2;
    k2 = RotateLeft(k2, 33);
    k2 *= kC1;
    h2 ^= k2;
  }
  for (size_t i = rest < 8 ? rest : 8; i > 0; i--) k1 ^= SignExtended(tail[i - 1]) << ((i - 1) * 8);
  if (rest > 0) {
    k1 *= kC1;
    k1 = RotateLeft(k1, 31);
    k1 *= kC2;
    h1 ^= k1;
  }

  h1 ^= length;
  h2 ^= length;
  h1 += h2;
  h2 += h1;
  h1 = FinalMix(h1);
  h2 = FinalMix(h2);
  h1 += h2;
  h2 += h1;
  return Hash128{h1, h2};
}

}  // namespace charybdis
