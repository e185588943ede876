#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/env/assert.h"

namespace charybdis {

// Fixed-width unsigned integers in big-endian byte order, so that stored
// keys sort as their numbers do.
inline void AppendBigEndian(std::string& out, uint64_t value, int bytes) {
  CHARYBDIS_ASSERT(bytes >= 1);
  CHARYBDIS_ASSERT(bytes <= 8);
  for (int shift = 8 * (bytes - 1); shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>(value >> shift));
  }
}

// REQUIRES: bytes.size() >= count.
inline uint64_t ReadBigEndian(std::string_view bytes, int count) {
  CHARYBDIS_ASSERT(count >= 1);
  CHARYBDIS_ASSERT(count <= 8);
  uint64_t value = 0;
  for (int i = 0; i < count; i++) value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  return value;
}

}  // namespace charybdis
