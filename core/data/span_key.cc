#include "core/data/span_key.h"

#include "core/data/big_endian.h"

namespace charybdis {

namespace {

constexpr size_t kTokenBytes = 8;
constexpr uint64_t kBias = uint64_t{1} << 63;

}  // namespace

std::string SpanKey(std::string_view prefix, std::string_view table, Token first, Token last) {
  CHARYBDIS_ASSERT(first <= last);
  std::string key(prefix);
  key.append(table);
  AppendBigEndian(key, static_cast<uint64_t>(last) ^ kBias, kTokenBytes);
  AppendBigEndian(key, static_cast<uint64_t>(first) ^ kBias, kTokenBytes);
  return key;
}

std::optional<SpanKeyParts> ParseSpanKey(std::string_view prefix, std::string_view key) {
  if (key.size() < prefix.size() + 2 * kTokenBytes || key.substr(0, prefix.size()) != prefix) return std::nullopt;
  const std::string_view span = key.substr(key.size() - 2 * kTokenBytes);
  SpanKeyParts parts;
  parts.table = std::string(key.substr(prefix.size(), key.size() - prefix.size() - 2 * kTokenBytes));
  parts.last = static_cast<Token>(ReadBigEndian(span, kTokenBytes) ^ kBias);
  parts.first = static_cast<Token>(ReadBigEndian(span.substr(kTokenBytes), kTokenBytes) ^ kBias);
  return parts;
}

}  // namespace charybdis
