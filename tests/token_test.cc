#include "core/data/token.h"

#include <gtest/gtest.h>

#include "core/data/murmur3.h"

namespace charybdis {
namespace {

// Tokens Cassandra and ScyllaDB give these keys (the ScyllaDB drivers pin
// the same values). "kremówki" has bytes >= 0x80 in its tail, so it pins
// Cassandra's sign-extension quirk too.
TEST(TokenTest, MatchesCassandraAndScylla) {
  EXPECT_EQ(TokenOf("test"), -6017608668500074083);
  EXPECT_EQ(TokenOf("xd"), 4507812186440344727);
  EXPECT_EQ(TokenOf("primary_key"), -1632642444691073360);
  EXPECT_EQ(TokenOf("kremówki"), 4354931215268080151);
}

TEST(TokenTest, LongKeysUseFullBlocks) {
  // 16-byte blocks plus every tail length must differ and be stable.
  std::string key;
  Token previous = TokenOf(key);
  for (int length = 1; length <= 40; length++) {
    key.push_back(static_cast<char>(0x70 + length));  // crosses 0x80
    const Token token = TokenOf(key);
    EXPECT_NE(token, previous) << length;
    EXPECT_EQ(token, TokenOf(key));
    previous = token;
  }
}

// Values from ScyllaDB's drivers (gocql and the Rust driver): 4 shards,
// 12 most significant bits ignored.
TEST(ShardOfTest, MatchesScyllaSharder) {
  EXPECT_EQ(ShardOf(-9219783007514621794, 4, 12), 3u);
  EXPECT_EQ(ShardOf(9222582454147032830, 4, 12), 3u);
}

TEST(ShardOfTest, FollowsTheBiasShiftScaleFormula) {
  // Token 0 biases to 2^63, which the 12-bit shift drops entirely.
  EXPECT_EQ(ShardOf(0, 8, 12), 0u);
  // With no bits ignored the ring splits into equal contiguous slices.
  EXPECT_EQ(ShardOf(kMinimumToken, 4, 0), 0u);
  EXPECT_EQ(ShardOf(-1, 4, 0), 1u);
  EXPECT_EQ(ShardOf(0, 4, 0), 2u);
  EXPECT_EQ(ShardOf(std::numeric_limits<int64_t>::max(), 4, 0), 3u);
  EXPECT_EQ(ShardOf(12345, 1), 0u);
}

TEST(ShardOfTest, SpreadsKeysEvenly) {
  std::vector<int> counts(6, 0);
  for (int i = 0; i < 60'000; i++) counts[ShardOf(TokenOf("key" + std::to_string(i)), 6)]++;
  for (int count : counts) {
    EXPECT_GT(count, 9'500);
    EXPECT_LT(count, 10'500);
  }
}

}  // namespace
}  // namespace charybdis
