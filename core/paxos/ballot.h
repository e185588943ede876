#pragma once

#include <tuple>

#include "proto/data.pb.h"

namespace charybdis {

// Ballots order by time, then by their unique word.
inline bool BallotLess(const Ballot& a, const Ballot& b) {
  if (a.micros() != b.micros()) return a.micros() < b.micros();
  return a.unique() < b.unique();
}

inline bool BallotEqual(const Ballot& a, const Ballot& b) {
  return a.micros() == b.micros() && a.unique() == b.unique();
}

}  // namespace charybdis
