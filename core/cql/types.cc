#include "core/cql/types.h"

#include <cstring>
#include <limits>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "core/data/big_endian.h"
#include "core/env/assert.h"

namespace charybdis::cql {
namespace {

const std::map<std::string_view, Kind>& ScalarNames() {
  static const auto* names = new std::map<std::string_view, Kind>{
      {"ascii", Kind::kAscii},     {"bigint", Kind::kBigint},     {"blob", Kind::kBlob},
      {"boolean", Kind::kBoolean}, {"decimal", Kind::kDecimal},   {"double", Kind::kDouble},
      {"float", Kind::kFloat},     {"int", Kind::kInt},           {"timestamp", Kind::kTimestamp},
      {"uuid", Kind::kUuid},       {"text", Kind::kText},         {"varchar", Kind::kText},
      {"varint", Kind::kVarint},   {"timeuuid", Kind::kTimeuuid}, {"inet", Kind::kInet},
      {"date", Kind::kDate},       {"smallint", Kind::kSmallint}, {"tinyint", Kind::kTinyint},
  };
  return *names;
}

// The fixed width of a scalar's native value, or 0 when it varies.
size_t FixedWidth(Kind kind) {
  switch (kind) {
    case Kind::kBoolean:
    case Kind::kTinyint: return 1;
    case Kind::kSmallint: return 2;
    case Kind::kInt:
    case Kind::kFloat:
    case Kind::kDate: return 4;
    case Kind::kBigint:
    case Kind::kTimestamp:
    case Kind::kDouble: return 8;
    case Kind::kUuid:
    case Kind::kTimeuuid: return 16;
    default: return 0;
  }
}

bool IsSigned(Kind kind) {
  return kind == Kind::kTinyint || kind == Kind::kSmallint || kind == Kind::kInt ||
         kind == Kind::kBigint || kind == Kind::kTimestamp;
}

// A UUID reordered so that version-1 UUIDs sort by time, as Cassandra's
// TimeUUIDType does: time_hi (with the version), time_mid, time_low, then
// the clock sequence and node as signed bytes. Its inverse below.
std::string UuidToComparable(std::string_view uuid) {
  std::string out;
  out.append(uuid.substr(6, 2)).append(uuid.substr(4, 2)).append(uuid.substr(0, 4));
  for (size_t i = 8; i < 16; i++) out.push_back(static_cast<char>(uuid[i] ^ 0x80));
  return out;
}

std::string UuidFromComparable(std::string_view comparable) {
  std::string out;
  out.append(comparable.substr(4, 4)).append(comparable.substr(2, 2)).append(comparable.substr(0, 2));
  for (size_t i = 8; i < 16; i++) out.push_back(static_cast<char>(comparable[i] ^ 0x80));
  return out;
}

// Varints: a 4-byte header that orders by sign and then by length (a
// longer positive is larger, a longer negative smaller), then the minimal
// two's complement bytes, which order correctly within one length.
std::string VarintToComparable(std::string_view native) {
  // The same number has one form: without redundant sign bytes.
  while (native.size() > 1 && ((native[0] == 0 && !(native[1] & 0x80)) ||
                               (native[0] == static_cast<char>(0xFF) && (native[1] & 0x80)))) {
    native.remove_prefix(1);
  }
  const bool negative = (static_cast<unsigned char>(native[0]) & 0x80) != 0;
  const uint32_t header = negative ? 0x7FFFFFFFu - static_cast<uint32_t>(native.size())
                                   : 0x80000000u + static_cast<uint32_t>(native.size());
  std::string out;
  AppendBigEndian(out, header, 4);
  out.append(native);
  CHARYBDIS_ASSERT(out.size() == 4 + native.size());
  return out;
}

bool IsUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char lead = text[i];
    const size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
    if (length == 0 || i + length > text.size()) return false;
    for (size_t k = 1; k < length; k++) {
      if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2) return false;
    }
    i += length;
  }
  CHARYBDIS_ASSERT(i == text.size());  // no sequence runs past the end
  return true;
}

// Removes `prefix` from the front of `text` if it is there.
bool Consume(std::string_view& text, std::string_view prefix) {
  if (text.substr(0, prefix.size()) != prefix) return false;
  text.remove_prefix(prefix.size());
  return true;
}

// A collection's native value in one form per value: a set's elements and
// a map's keys in their order, each once (a map's last value of a key
// wins, as the literal {k: 1, k: 2} does in Cassandra), nested ones too.
std::string CanonicalCollection(const Type& type, std::string_view native) {
  const Type& first = type.params[0];
  if (type.kind == Kind::kMap) {
    std::optional<std::vector<std::pair<std::string, std::string>>> entries = SplitMap(native);
    CHARYBDIS_ASSERT(entries.has_value());  // REQUIRES: valid
    std::map<std::string, std::pair<std::string, std::string>> by_key;
    for (const auto& [key, value] : *entries) {
      by_key[ToComparable(first, key)] = {key, type.params[1].is_collection() ? ToComparable(type.params[1], value) : value};
    }
    std::vector<std::pair<std::string, std::string>> sorted;
    for (auto& [comparable, entry] : by_key) sorted.push_back(std::move(entry));
    return NativeMap(sorted);
  }
  std::optional<std::vector<std::string>> elements = SplitCollection(native);
  CHARYBDIS_ASSERT(elements.has_value());  // REQUIRES: valid
  if (first.is_collection()) {
    for (std::string& element : *elements) element = ToComparable(first, element);
  }
  if (type.kind == Kind::kList) return NativeCollection(*elements);
  std::map<std::string, std::string> by_order;
  for (std::string& element : *elements) by_order.emplace(ToComparable(first, element), std::move(element));
  std::vector<std::string> sorted;
  for (auto& [comparable, element] : by_order) sorted.push_back(std::move(element));
  return NativeCollection(sorted);
}

}  // namespace

std::optional<Type> ParseType(std::string_view name) {
  std::string text;
  for (char c : name) {
    if (!absl::ascii_isspace(static_cast<unsigned char>(c))) text.push_back(absl::ascii_tolower(static_cast<unsigned char>(c)));
  }
  std::string_view view = text;
  const bool parameterized = !view.empty() && view.back() == '>';
  if (parameterized && Consume(view, "frozen<")) {
    std::optional<Type> inner = ParseType(view.substr(0, view.size() - 1));
    if (!inner || !inner->is_collection()) return std::nullopt;  // only collections freeze
    inner->frozen = true;
    return inner;
  }
  for (const auto& [prefix, kind] : {std::pair{"list<", Kind::kList}, {"set<", Kind::kSet}, {"map<", Kind::kMap}}) {
    if (!parameterized || !Consume(view, prefix)) continue;
    view.remove_suffix(1);
    // A map's key and value split at the comma outside every <>.
    size_t comma = std::string_view::npos;
    for (size_t i = 0, depth = 0; i < view.size() && kind == Kind::kMap; i++) {
      depth += view[i] == '<' ? 1 : 0;
      depth -= view[i] == '>' && depth > 0 ? 1 : 0;
      if (view[i] == ',' && depth == 0) {
        comma = i;
        break;
      }
    }
    if (kind == Kind::kMap && comma == std::string_view::npos) return std::nullopt;
    Type type{kind, {}};
    for (std::string_view part : kind == Kind::kMap ? std::vector{view.substr(0, comma), view.substr(comma + 1)}
                                                    : std::vector{view}) {
      std::optional<Type> element = ParseType(part);
      // Inside a collection only frozen ones (Cassandra's rule).
      if (!element || element->multi_cell()) return std::nullopt;
      type.params.push_back(*element);
    }
    CHARYBDIS_ASSERT(type.params.size() == (kind == Kind::kMap ? 2u : 1u));
    if (kind != Kind::kList && !IsOrdered(type.params[0])) return std::nullopt;
    return type;
  }
  auto it = ScalarNames().find(view);
  if (it == ScalarNames().end()) return std::nullopt;
  return Type{it->second, {}};
}

std::string TypeName(const Type& type) {
  if (type.frozen) {
    Type inner = type;
    inner.frozen = false;
    return absl::StrCat("frozen<", TypeName(inner), ">");
  }
  switch (type.kind) {
    case Kind::kList: return absl::StrCat("list<", TypeName(type.params[0]), ">");
    case Kind::kSet: return absl::StrCat("set<", TypeName(type.params[0]), ">");
    case Kind::kMap: return absl::StrCat("map<", TypeName(type.params[0]), ", ", TypeName(type.params[1]), ">");
    case Kind::kText: return "text";
    default: break;
  }
  for (const auto& [name, kind] : ScalarNames()) {
    if (kind == type.kind) return std::string(name);
  }
  return "blob";
}

void WriteTypeOption(Writer& out, const Type& type) {
  out.Short(static_cast<uint16_t>(type.kind));
  for (const Type& param : type.params) WriteTypeOption(out, param);
}

std::optional<std::vector<std::string>> SplitCollection(std::string_view native) {
  if (native.size() < 4) return std::nullopt;
  const int32_t count = static_cast<int32_t>(ReadBigEndian(native, 4));
  native.remove_prefix(4);
  std::vector<std::string> elements;
  for (int32_t i = 0; i < count; i++) {
    if (native.size() < 4) return std::nullopt;
    const int32_t length = static_cast<int32_t>(ReadBigEndian(native, 4));
    native.remove_prefix(4);
    if (length < 0 || native.size() < static_cast<size_t>(length)) return std::nullopt;
    elements.emplace_back(native.substr(0, length));
    native.remove_prefix(length);
  }
  if (!native.empty() || count < 0) return std::nullopt;
  CHARYBDIS_ASSERT(elements.size() == static_cast<size_t>(count));
  return elements;
}

std::optional<std::vector<std::pair<std::string, std::string>>> SplitMap(std::string_view native) {
  // A map is a list of twice as many values: key, value, key, value...
  if (native.size() < 4) return std::nullopt;
  const int32_t count = static_cast<int32_t>(ReadBigEndian(native, 4));
  if (count < 0 || count > std::numeric_limits<int32_t>::max() / 2) return std::nullopt;
  std::string doubled = NativeInt(count * 2);
  doubled.append(native.substr(4));
  std::optional<std::vector<std::string>> values = SplitCollection(doubled);
  if (!values) return std::nullopt;
  std::vector<std::pair<std::string, std::string>> entries;
  for (size_t i = 0; i < values->size(); i += 2) entries.emplace_back((*values)[i], (*values)[i + 1]);
  CHARYBDIS_ASSERT(entries.size() == static_cast<size_t>(count));
  return entries;
}

absl::Status ValidateNative(const Type& type, std::string_view native) {
  if (type.kind == Kind::kList || type.kind == Kind::kSet) {
    std::optional<std::vector<std::string>> elements = SplitCollection(native);
    if (!elements) return absl::InvalidArgumentError(absl::StrCat("a malformed ", TypeName(type), " value"));
    for (const std::string& element : *elements) {
      if (absl::Status valid = ValidateNative(type.params[0], element); !valid.ok()) return valid;
    }
    return absl::OkStatus();
  }
  if (type.kind == Kind::kMap) {
    std::optional<std::vector<std::pair<std::string, std::string>>> entries = SplitMap(native);
    if (!entries) return absl::InvalidArgumentError(absl::StrCat("a malformed ", TypeName(type), " value"));
    for (const auto& [key, value] : *entries) {
      if (absl::Status valid = ValidateNative(type.params[0], key); !valid.ok()) return valid;
      if (absl::Status valid = ValidateNative(type.params[1], value); !valid.ok()) return valid;
    }
    return absl::OkStatus();
  }
  const size_t width = FixedWidth(type.kind);
  if (width != 0 && native.size() != width) {
    return absl::InvalidArgumentError(
        absl::StrCat("a ", TypeName(type), " value takes ", width, " bytes, not ", native.size()));
  }
  switch (type.kind) {
    case Kind::kAscii:
      for (char c : native) {
        if (static_cast<unsigned char>(c) >= 0x80) return absl::InvalidArgumentError("an ascii value holds a non-ASCII byte");
      }
      break;
    case Kind::kText:
      if (!IsUtf8(native)) return absl::InvalidArgumentError("a text value is not valid UTF-8");
      break;
    case Kind::kVarint:
      if (native.empty()) return absl::InvalidArgumentError("a varint value takes at least 1 byte");
      break;
    case Kind::kDecimal:
      if (native.size() < 5) return absl::InvalidArgumentError("a decimal value takes at least 5 bytes");
      break;
    case Kind::kInet:
      if (native.size() != 4 && native.size() != 16) return absl::InvalidArgumentError("an inet value takes 4 or 16 bytes");
      break;
    case Kind::kTimeuuid:
      CHARYBDIS_ASSERT(native.size() == 16);  // its width was checked above
      if ((static_cast<unsigned char>(native[6]) >> 4) != 1) return absl::InvalidArgumentError("a timeuuid must be a version 1 UUID");
      break;
    default:
      break;
  }
  return absl::OkStatus();
}

bool IsOrdered(const Type& type) { return type.kind != Kind::kDecimal && !type.is_collection(); }

std::string ToComparable(const Type& type, std::string_view native) {
  if (type.is_collection()) return CanonicalCollection(type, native);
  std::string out(native);
  if (IsSigned(type.kind)) {
    out[0] = static_cast<char>(out[0] ^ 0x80);
  } else if (type.kind == Kind::kFloat || type.kind == Kind::kDouble) {
    // Positive: flip the sign bit; negative: flip every bit.
    const bool negative = (static_cast<unsigned char>(out[0]) & 0x80) != 0;
    for (size_t i = 0; i < out.size(); i++) out[i] = static_cast<char>(out[i] ^ (negative ? 0xFF : (i == 0 ? 0x80 : 0)));
  } else if (type.kind == Kind::kUuid || type.kind == Kind::kTimeuuid) {
    return UuidToComparable(native);
  } else if (type.kind == Kind::kVarint) {
    return VarintToComparable(native);
  }
  return out;
}

std::string FromComparable(const Type& type, std::string_view comparable) {
  std::string out(comparable);
  if (IsSigned(type.kind)) {
    out[0] = static_cast<char>(out[0] ^ 0x80);
  } else if (type.kind == Kind::kFloat || type.kind == Kind::kDouble) {
    const bool was_positive = (static_cast<unsigned char>(out[0]) & 0x80) != 0;
    for (size_t i = 0; i < out.size(); i++) out[i] = static_cast<char>(out[i] ^ (was_positive ? (i == 0 ? 0x80 : 0) : 0xFF));
  } else if (type.kind == Kind::kUuid || type.kind == Kind::kTimeuuid) {
    return UuidFromComparable(comparable);
  } else if (type.kind == Kind::kVarint) {
    return out.substr(4);
  }
  return out;
}

std::string NativeInt(int32_t value) {
  std::string out;
  AppendBigEndian(out, static_cast<uint32_t>(value), 4);
  CHARYBDIS_ASSERT(out.size() == 4);
  return out;
}

std::string NativeBigint(int64_t value) {
  std::string out;
  AppendBigEndian(out, static_cast<uint64_t>(value), 8);
  CHARYBDIS_ASSERT(out.size() == 8);
  return out;
}

std::string NativeBoolean(bool value) { return std::string(1, value ? 1 : 0); }

std::string NativeFloating(bool single, double value) {
  std::string out;
  if (single) {
    const float narrow = static_cast<float>(value);
    uint32_t bits = 0;
    std::memcpy(&bits, &narrow, 4);
    AppendBigEndian(out, bits, 4);
  } else {
    uint64_t bits = 0;
    std::memcpy(&bits, &value, 8);
    AppendBigEndian(out, bits, 8);
  }
  CHARYBDIS_ASSERT(out.size() == (single ? 4u : 8u));
  return out;
}

std::string NativeCollection(const std::vector<std::string>& elements) {
  std::string out = NativeInt(static_cast<int32_t>(elements.size()));
  for (const std::string& element : elements) out.append(NativeInt(static_cast<int32_t>(element.size()))).append(element);
  return out;
}

std::string NativeMap(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string out = NativeInt(static_cast<int32_t>(entries.size()));
  for (const auto& [key, value] : entries) {
    out.append(NativeInt(static_cast<int32_t>(key.size()))).append(key);
    out.append(NativeInt(static_cast<int32_t>(value.size()))).append(value);
  }
  return out;
}

}  // namespace charybdis::cql
