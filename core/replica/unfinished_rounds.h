#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/data/token.h"

namespace charybdis {

// The one question a replica asks of Paxos, owned here so that replica/
// needs nothing of paxos/ (the acceptor answers it). A plain read that
// meets an unfinished round must let its coordinator finish the round
// first, or it could read a value that Paxos later overrides.
class UnfinishedRounds {
 public:
  virtual ~UnfinishedRounds() = default;
  // Whether this shard holds, for the partition, an accepted proposal
  // newer than its latest commit.
  virtual bool InProgress(const std::string& table, const std::string& partition_key) const = 0;
  // The partitions of `table` whose tokens are in [first, last] that
  // InProgress holds for: what a scan of the range must let its
  // coordinator finish first, as a read of one partition does. Nothing
  // while they are unknown (the Paxos state is not loaded yet).
  virtual std::optional<std::vector<std::string>> InProgressIn(const std::string& table, Token first,
                                                               Token last) const = 0;
};

}  // namespace charybdis
