#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

namespace charybdis {

// A position on the ring: Murmur3Partitioner's signed 64-bit token.
using Token = int64_t;

constexpr Token kMinimumToken = std::numeric_limits<int64_t>::min();

// The token of a partition key, as Cassandra and ScyllaDB compute it.
Token TokenOf(std::string_view partition_key);

// The shard of a node that owns `token`, bit-exact with ScyllaDB's
// dht::sharder: bias the token to unsigned, drop `ignore_msb` high bits,
// then scale to the shard count. REQUIRES: shards >= 1.
uint32_t ShardOf(Token token, uint32_t shards, uint32_t ignore_msb);

// ScyllaDB's default: 12 bits ignored, none with a single shard.
inline uint32_t IgnoreMsbBits(uint32_t shards) { return shards == 1 ? 0 : 12; }
inline uint32_t ShardOf(Token token, uint32_t shards) { return ShardOf(token, shards, IgnoreMsbBits(shards)); }

}  // namespace charybdis
