#include "core/topology/token_spans.h"

#include <iterator>
#include <limits>

#include "core/env/assert.h"

namespace charybdis::topology {

void AppendSpan(std::vector<TokenSpan>& spans, TokenSpan span) {
  CHARYBDIS_ASSERT(span.first <= span.last);
  if (!spans.empty() && spans.back().last != std::numeric_limits<Token>::max() &&
      spans.back().last + 1 == span.first) {
    spans.back().last = span.last;
    return;
  }
  CHARYBDIS_ASSERT(spans.empty() || spans.back().last < span.first);
  spans.push_back(span);
}

void ForEachRingRange(const std::set<Token>& bounds, const std::function<void(Token owner, TokenSpan span)>& each) {
  CHARYBDIS_ASSERT(!bounds.empty());
  constexpr Token kMinToken = std::numeric_limits<Token>::min();
  constexpr Token kMaxToken = std::numeric_limits<Token>::max();
  each(*bounds.begin(), TokenSpan{kMinToken, *bounds.begin()});
  for (auto it = std::next(bounds.begin()); it != bounds.end(); ++it) each(*it, TokenSpan{*std::prev(it) + 1, *it});
  if (*bounds.rbegin() != kMaxToken) each(*bounds.begin(), TokenSpan{*bounds.rbegin() + 1, kMaxToken});
}

}  // namespace charybdis::topology
