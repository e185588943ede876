#pragma once

// Keys of what a shard records per table and token span (the repair
// history, the Paxos fences): a prefix, the table, then the span's last and
// first tokens, biased to unsigned so that byte order is token order.

#include <optional>
#include <string>
#include <string_view>

#include "core/data/token.h"

namespace charybdis {

struct SpanKeyParts {
  std::string table;
  Token first = 0;
  Token last = 0;
};

std::string SpanKey(std::string_view prefix, std::string_view table, Token first, Token last);
// Nothing for a key too short to hold a span after the prefix.
std::optional<SpanKeyParts> ParseSpanKey(std::string_view prefix, std::string_view key);

}  // namespace charybdis
