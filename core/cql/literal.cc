#include "core/cql/literal.h"

#include <arpa/inet.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/escaping.h"
#include "absl/time/time.h"
#include "core/data/big_endian.h"
#include "core/env/assert.h"

namespace charybdis::cql {
namespace {

absl::Status Mismatch(const Type& type, const Term& term) {
  return absl::InvalidArgumentError(absl::StrCat("invalid constant ", term.text.empty() ? "null" : term.text,
                                                 " for a value of type ", TypeName(type)));
}

absl::StatusOr<std::string> IntegerValue(const Type& type, const Term& term) {
  int64_t value = 0;
  if (!absl::SimpleAtoi(term.text, &value)) return Mismatch(type, term);
  const int width = type.kind == Kind::kTinyint ? 1 : type.kind == Kind::kSmallint ? 2 : type.kind == Kind::kInt ? 4 : 8;
  if (width < 8 && (value < -(int64_t{1} << (8 * width - 1)) || value >= (int64_t{1} << (8 * width - 1)))) {
    return absl::InvalidArgumentError(absl::StrCat(term.text, " is out of range for a ", TypeName(type)));
  }
  std::string out;
  AppendBigEndian(out, static_cast<uint64_t>(value), width);
  CHARYBDIS_ASSERT(out.size() == static_cast<size_t>(width));
  return out;
}

// Minimal two's complement, as Cassandra serializes a varint.
std::string VarintValue(int64_t value) {
  std::string out;
  AppendBigEndian(out, static_cast<uint64_t>(value), 8);
  while (out.size() > 1 && ((out[0] == 0 && !(out[1] & 0x80)) || (out[0] == static_cast<char>(0xFF) && (out[1] & 0x80)))) {
    out.erase(0, 1);
  }
  CHARYBDIS_ASSERT(!out.empty());
  CHARYBDIS_ASSERT(out.size() <= 8);
  return out;
}

absl::StatusOr<std::string> FloatingValue(const Type& type, const Term& term) {
  double value = 0;
  if (term.text == "nan") {
    value = std::numeric_limits<double>::quiet_NaN();
  } else if (term.text == "infinity") {
    value = std::numeric_limits<double>::infinity();
  } else if (!absl::SimpleAtod(term.text, &value)) {
    return Mismatch(type, term);
  }
  return NativeFloating(type.kind == Kind::kFloat, value);
}

// Decimals from a constant: the digits as the unscaled varint (within 64
// bits), the digits after the point as the scale.
absl::StatusOr<std::string> DecimalValue(const Type& type, const Term& term) {
  std::string digits = term.text;
  int32_t scale = 0;
  if (size_t point = digits.find('.'); point != std::string::npos) {
    scale = static_cast<int32_t>(digits.size() - point - 1);
    digits.erase(point, 1);
  }
  int64_t unscaled = 0;
  if (!absl::SimpleAtoi(digits, &unscaled)) return Mismatch(type, term);
  return absl::StrCat(NativeInt(scale), VarintValue(unscaled));
}

absl::StatusOr<std::string> UuidValue(const Type& type, const Term& term) {
  std::string hex = term.text;
  hex.erase(std::remove(hex.begin(), hex.end(), '-'), hex.end());
  std::string bytes = absl::HexStringToBytes(hex);
  if (absl::Status valid = ValidateNative(type, bytes); !valid.ok()) return valid;
  CHARYBDIS_ASSERT(bytes.size() == 16);  // a valid uuid or timeuuid
  return bytes;
}

// 'yyyy-mm-dd[ hh:mm[:ss[.fff]]][zone]' as Cassandra reads a timestamp.
absl::StatusOr<std::string> TimestampValue(const Type& type, const Term& term) {
  std::string text = term.text;
  if (text.size() > 10 && text[10] == 'T') text[10] = ' ';
  for (const char* format : {"%Y-%m-%d %H:%M:%E*S%Ez", "%Y-%m-%d %H:%M:%E*S%z", "%Y-%m-%d %H:%M:%E*S", "%Y-%m-%d %H:%M%Ez",
                             "%Y-%m-%d %H:%M", "%Y-%m-%d%Ez", "%Y-%m-%d"}) {
    absl::Time time;
    if (absl::ParseTime(format, text, absl::UTCTimeZone(), &time, nullptr)) {
      if (type.kind == Kind::kDate) {
        const int64_t days = absl::ToUnixSeconds(time) / 86400;
        std::string out;
        AppendBigEndian(out, static_cast<uint32_t>(days + (int64_t{1} << 31)), 4);
        CHARYBDIS_ASSERT(out.size() == 4);
        return out;
      }
      return NativeBigint(absl::ToUnixMillis(time));
    }
  }
  return Mismatch(type, term);
}

absl::StatusOr<std::string> InetValue(const Type& type, const Term& term) {
  unsigned char address[16];
  if (inet_pton(AF_INET, term.text.c_str(), address) == 1) return std::string(reinterpret_cast<char*>(address), 4);
  if (inet_pton(AF_INET6, term.text.c_str(), address) == 1) return std::string(reinterpret_cast<char*>(address), 16);
  return Mismatch(type, term);
}

absl::StatusOr<std::string> StringValue(const Type& type, const Term& term) {
  switch (type.kind) {
    case Kind::kText:
    case Kind::kAscii:
      if (absl::Status valid = ValidateNative(type, term.text); !valid.ok()) return valid;
      return term.text;
    case Kind::kTimestamp:
    case Kind::kDate: return TimestampValue(type, term);
    case Kind::kInet: return InetValue(type, term);
    default: return Mismatch(type, term);
  }
}

}  // namespace

absl::StatusOr<std::optional<std::string>> LiteralValue(const Type& type, const Term& term) {
  switch (term.kind) {
    case Term::Kind::kNull: return std::optional<std::string>();
    case Term::Kind::kString: return StringValue(type, term);
    case Term::Kind::kBoolean:
      if (type.kind != Kind::kBoolean) return Mismatch(type, term);
      return NativeBoolean(term.text == "true");
    case Term::Kind::kHex:
      if (type.kind != Kind::kBlob || term.text.size() % 2 != 0) return Mismatch(type, term);
      return absl::HexStringToBytes(term.text);
    case Term::Kind::kUuid:
      if (type.kind != Kind::kUuid && type.kind != Kind::kTimeuuid) return Mismatch(type, term);
      return UuidValue(type, term);
    case Term::Kind::kInteger:
      switch (type.kind) {
        case Kind::kTinyint:
        case Kind::kSmallint:
        case Kind::kInt:
        case Kind::kBigint:
        case Kind::kTimestamp: return IntegerValue(type, term);
        case Kind::kVarint: {
          int64_t value = 0;
          if (!absl::SimpleAtoi(term.text, &value)) return Mismatch(type, term);
          return VarintValue(value);
        }
        case Kind::kFloat:
        case Kind::kDouble: return FloatingValue(type, term);
        case Kind::kDecimal: return DecimalValue(type, term);
        default: return Mismatch(type, term);
      }
    case Term::Kind::kFloat:
      if (type.kind == Kind::kDecimal) return DecimalValue(type, term);
      if (type.kind != Kind::kFloat && type.kind != Kind::kDouble) return Mismatch(type, term);
      return FloatingValue(type, term);
    case Term::Kind::kList:
    case Term::Kind::kSet:
    case Term::Kind::kMap:
    case Term::Kind::kFunction: return Mismatch(type, term);  // Bindings evaluates them
    case Term::Kind::kBindMarker: break;
  }
  return absl::InternalError("a bind marker has no literal value");
}

}  // namespace charybdis::cql
