#pragma once

// What a shard records per table and token span (the repair history, the
// Paxos fences): their keys (a prefix, the table, then the span's last and
// first tokens, biased to unsigned so that byte order is token order), and
// the walks over a table's records in memory.

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/data/token.h"
#include "core/env/assert.h"

namespace charybdis {

struct SpanKeyParts {
  std::string table;
  Token first = 0;
  Token last = 0;
};

std::string SpanKey(std::string_view prefix, std::string_view table, Token first, Token last);
// Nothing for a key too short to hold a span after the prefix.
std::optional<SpanKeyParts> ParseSpanKey(std::string_view prefix, std::string_view key);

// One table's records by span, keyed (last, first): the spans that hold a
// token are among those from it up.
template <typename Value>
using SpanRecords = std::map<std::pair<Token, Token>, Value>;

// Calls `fn(value)` for the record of each span that holds `token`.
template <typename Value, typename Fn>
void ForEachSpanHolding(const SpanRecords<Value>& spans, Token token, Fn fn) {
  for (auto it = spans.lower_bound({token, std::numeric_limits<Token>::min()}); it != spans.end(); ++it) {
    const auto& [last, first] = it->first;
    CHARYBDIS_ASSERT(last >= token);
    if (first <= token) fn(it->second);
  }
}

// The spans inside [first, last], but itself, whose records a new record
// of [first, last] supersedes (`superseded(value)`): they say nothing more.
template <typename Value, typename Superseded>
std::vector<std::pair<Token, Token>> SpansInside(const SpanRecords<Value>& spans, Token first, Token last,
                                                 Superseded superseded) {
  std::vector<std::pair<Token, Token>> inside;
  for (const auto& [bounds, value] : spans) {
    const auto& [span_last, span_first] = bounds;
    const bool within = span_first >= first && span_last <= last && bounds != std::make_pair(last, first);
    if (within && superseded(value)) inside.push_back(bounds);
  }
  return inside;
}

}  // namespace charybdis
