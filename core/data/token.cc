#include "core/data/token.h"

#include "core/env/assert.h"
#include "core/data/murmur3.h"

namespace charybdis {

Token TokenOf(std::string_view partition_key) {
  const auto token = static_cast<Token>(CassandraMurmur3(partition_key).low);
  // Cassandra reserves the minimum token for "before every key".
  return token == kMinimumToken ? std::numeric_limits<int64_t>::max() : token;
}

uint32_t ShardOf(Token token, uint32_t shards, uint32_t ignore_msb) {
  CHARYBDIS_ASSERT(shards >= 1);
  CHARYBDIS_ASSERT(ignore_msb < 64);
  uint64_t biased = static_cast<uint64_t>(token) + (uint64_t{1} << 63);
  biased <<= ignore_msb;
  return static_cast<uint32_t>((static_cast<unsigned __int128>(biased) * shards) >> 64);
}

}  // namespace charybdis
