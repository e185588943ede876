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

// Every tail length of one and two 16-byte blocks, with bytes that cross
// 0x80: the Python driver's murmur3 (the token it routes by) gives these.
TEST(TokenTest, LongKeysMatchTheDriversTokenAtEveryTailLength) {
  const Token expected[] = {
      -4882450986412430415, 3462241619686304089,  3205443593108664996,  460378443079053842,   5458261159187608033,
      -5402650817035246753, -9142148565371320493, -6820119002390849432, 3901903898091122291,  6142344187927041673,
      -8427146570895982712, -6341209535134374619, -5288211800715448808, -6495529944181463474, -2652270642265250504,
      7845365806364534948,  -5745094766327773530, 1020693109390449072,  3982034308176030390,  8443137983467211356,
      5379073473518002247,  -428826535628045316,  5077231026114680431,  -6751572282981539102, 8194168689468148126,
      7289854723678583275,  -8811337855639886884, -919633486006105621,  -8821339281541554816, -1388171395034367716,
      -4864135315847966996, 2180762957100145506,  8928010862000462785,  -1822317682454383192, 4950780315618486214,
      5973022169480865944,  3243498256621660918,  4954450628498616801,  2099131337684645475,  -5272746993882091198};
  std::string key;
  for (int length = 1; length <= 40; length++) {
    key.push_back(static_cast<char>(0x70 + length));
    EXPECT_EQ(TokenOf(key), expected[length - 1]) << "length " << length;
  }
}

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
