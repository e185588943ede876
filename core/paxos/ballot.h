#pragma once

#include <cstdint>

#include "core/env/assert.h"
#include "proto/data.pb.h"

namespace charybdis {

// The unique word of a ballot, high bits to low: the proposer's node and
// shard, a random nonce of the shard's life, and a counter. Node ids and
// shard counts are bounded by it: the node config and scenario validators
// read these limits, so no valid cluster can make two proposers' ballots
// collide.
struct BallotLayout {
  static constexpr int kNodeBits = 12;
  static constexpr int kShardBits = 8;
  static constexpr int kNonceBits = 20;
  static constexpr int kCounterBits = 24;
  static constexpr int kShardShift = kNonceBits + kCounterBits;
  static constexpr int kNodeShift = kShardShift + kShardBits;
  static constexpr uint32_t kMaxNodeId = (uint32_t{1} << kNodeBits) - 1;
  static constexpr uint32_t kMaxShards = uint32_t{1} << kShardBits;
  static constexpr uint64_t kMaxNonce = (uint64_t{1} << kNonceBits) - 1;
  static constexpr uint64_t kCounterMask = (uint64_t{1} << kCounterBits) - 1;
};
static_assert(BallotLayout::kNodeBits + BallotLayout::kShardBits + BallotLayout::kNonceBits +
                  BallotLayout::kCounterBits == 64,
              "the unique word is 64 bits");

inline uint64_t BallotUnique(uint32_t node, uint32_t shard, uint64_t nonce, uint64_t counter) {
  CHARYBDIS_ASSERT(node >= 1);
  CHARYBDIS_ASSERT(node <= BallotLayout::kMaxNodeId);
  CHARYBDIS_ASSERT(shard < BallotLayout::kMaxShards);
  CHARYBDIS_ASSERT(nonce <= BallotLayout::kMaxNonce);
  return uint64_t{node} << BallotLayout::kNodeShift | uint64_t{shard} << BallotLayout::kShardShift |
         nonce << BallotLayout::kCounterBits | (counter & BallotLayout::kCounterMask);
}

// Ballots order by time, then by their unique word.
inline bool BallotLess(const Ballot& a, const Ballot& b) {
  if (a.micros() != b.micros()) return a.micros() < b.micros();
  return a.unique() < b.unique();
}

inline bool BallotEqual(const Ballot& a, const Ballot& b) {
  return a.micros() == b.micros() && a.unique() == b.unique();
}

}  // namespace charybdis
