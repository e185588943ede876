#pragma once

#include <cstdint>
#include <string_view>

namespace charybdis {

struct Hash128 {
  uint64_t low;   // Cassandra's hash[0]
  uint64_t high;  // Cassandra's hash[1]
};

// MurmurHash3_x64_128 exactly as Cassandra (and, for compatibility,
// ScyllaDB) computes it, including its quirk: tail bytes are sign-extended
// before shifting, so keys with bytes >= 0x80 in the last (len % 16) bytes
// hash differently from the reference MurmurHash3.
Hash128 CassandraMurmur3(std::string_view bytes, uint64_t seed = 0);

}  // namespace charybdis
