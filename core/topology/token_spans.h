#pragma once

#include <functional>
#include <set>
#include <vector>

#include "core/data/token.h"

namespace charybdis::topology {

// A token range, both ends inclusive (as StreamRanges carries it).
struct TokenSpan {
  Token first = 0;
  Token last = 0;
  bool operator==(const TokenSpan&) const = default;
};

// Appends `span` to ascending, disjoint `spans`, merged into the last one
// when adjacent to it. REQUIRES: span starts after the last one ends.
void AppendSpan(std::vector<TokenSpan>& spans, TokenSpan span);

// Calls `each(owner, span)` for every range of the token space between
// consecutive `bounds` (the tokens of one or more rings): a range
// (previous, token] is the vnode of `token`, whose replicas are constant
// within it. The wrapping range comes as two spans, [min, first] and
// (last, max], both owned by the first token. In ascending order.
// REQUIRES: bounds is not empty.
void ForEachRingRange(const std::set<Token>& bounds, const std::function<void(Token owner, TokenSpan span)>& each);

}  // namespace charybdis::topology
