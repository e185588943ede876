#pragma once

#include <algorithm>
#include <cstdint>

#include "core/env/address.h"
#include "core/env/assert.h"
#include "core/env/time.h"
#include "core/paxos/ballot.h"

namespace charybdis {

// Mints one shard's ballots: strictly above every ballot time this shard
// has made or seen, and unique: (node, shard, a random nonce of this life,
// counter). The nonce matters: after a restart with a clock stepped back,
// time alone could repeat a ballot of the previous life.
class BallotClock {
 public:
  BallotClock() = default;
  // `nonce`: BallotLayout::kNonceBits random bits drawn at the shard's start.
  BallotClock(Address self, uint64_t nonce) : self_(self), nonce_(nonce) {
    CHARYBDIS_ASSERT(nonce <= BallotLayout::kMaxNonce);
  }

  Ballot Next(Nanos now_nanos) {
    const int64_t previous = highest_micros_;
    const int64_t now = now_nanos / kMicrosecond;
    highest_micros_ = std::max(now, highest_micros_ + 1);
    Ballot ballot;
    ballot.set_micros(highest_micros_);
    ballot.set_unique(BallotUnique(self_.node, self_.shard, nonce_, ++counter_));
    // Strictly above every ballot this shard made or saw, whatever the clock did.
    CHARYBDIS_ASSERT(ballot.micros() > previous);
    CHARYBDIS_ASSERT(ballot.micros() >= now);
    return ballot;
  }
  // A ballot seen in a reply: the next one minted is above it.
  void See(const Ballot& ballot) {
    highest_micros_ = std::max(highest_micros_, ballot.micros());
    CHARYBDIS_ASSERT(highest_micros_ >= ballot.micros());
  }

 private:
  Address self_;
  uint64_t nonce_ = 0;
  int64_t highest_micros_ = 0;
  uint32_t counter_ = 0;
};

}  // namespace charybdis
