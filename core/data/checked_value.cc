#include "core/data/checked_value.h"

#include <cstdint>

#include "core/env/assert.h"
#include "core/data/big_endian.h"
#include "core/data/murmur3.h"

namespace charybdis::checked_value {

namespace {

constexpr size_t kChecksumBytes = 8;

// Murmur3 is already ours (tokens); 64 bits of it miss a random corruption
// with odds of 2^-64, and it needs no new dependency.
uint64_t Checksum(std::string_view key, std::string_view payload) {
  return CassandraMurmur3(payload, CassandraMurmur3(key).low).low;
}

}  // namespace

std::string Seal(std::string_view key, std::string_view payload) {
  std::string stored(payload);
  AppendBigEndian(stored, Checksum(key, payload), kChecksumBytes);
  CHARYBDIS_ASSERT(stored.size() == payload.size() + kChecksumBytes);
  return stored;
}

std::optional<std::string_view> Open(std::string_view key, std::string_view stored) {
  if (stored.size() < kChecksumBytes) return std::nullopt;
  const std::string_view payload = stored.substr(0, stored.size() - kChecksumBytes);
  const uint64_t sum = ReadBigEndian(stored.substr(payload.size()), kChecksumBytes);
  if (sum != Checksum(key, payload)) return std::nullopt;
  return payload;
}

}  // namespace charybdis::checked_value
