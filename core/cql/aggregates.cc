#include "core/cql/aggregates.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/data/big_endian.h"
#include "core/env/assert.h"

namespace charybdis::cql {
namespace {

bool IsInteger(Kind kind) {
  return kind == Kind::kTinyint || kind == Kind::kSmallint || kind == Kind::kInt || kind == Kind::kBigint;
}
bool IsFloating(Kind kind) { return kind == Kind::kFloat || kind == Kind::kDouble; }

int WidthOf(Kind kind) {
  switch (kind) {
    case Kind::kTinyint: return 1;
    case Kind::kSmallint: return 2;
    case Kind::kInt:
    case Kind::kFloat: return 4;
    default: return 8;
  }
}

int64_t IntegerOf(const std::string& native) {
  const int width = static_cast<int>(native.size());
  CHARYBDIS_ASSERT(width >= 1 && width <= 8);  // a validated integer
  const uint64_t bits = ReadBigEndian(native, width);
  const int shift = 64 - 8 * width;
  return static_cast<int64_t>(bits << shift) >> shift;  // sign-extended
}

double FloatingOf(const std::string& native) {
  if (native.size() == 4) {
    const uint32_t bits = static_cast<uint32_t>(ReadBigEndian(native, 4));
    float value = 0;
    std::memcpy(&value, &bits, 4);
    return value;
  }
  CHARYBDIS_ASSERT(native.size() == 8);
  const uint64_t bits = ReadBigEndian(native, 8);
  double value = 0;
  std::memcpy(&value, &bits, 8);
  return value;
}

std::string NativeInteger(Kind kind, int64_t integer) {
  std::string out;
  AppendBigEndian(out, static_cast<uint64_t>(integer), WidthOf(kind));
  return out;
}

std::string FunctionName(ResultColumn::Holds function) {
  switch (function) {
    case ResultColumn::Holds::kCount: return "count";
    case ResultColumn::Holds::kMin: return "min";
    case ResultColumn::Holds::kMax: return "max";
    case ResultColumn::Holds::kSum: return "sum";
    default: return "avg";
  }
}

}  // namespace

absl::Status CheckAggregate(ResultColumn::Holds function, const std::string& name, const Type& type) {
  CHARYBDIS_ASSERT(function >= ResultColumn::Holds::kCount);
  const bool fits = function == ResultColumn::Holds::kCount ||
                    ((function == ResultColumn::Holds::kMin || function == ResultColumn::Holds::kMax)
                         ? IsOrdered(type)
                         : IsInteger(type.kind) || IsFloating(type.kind));
  if (fits) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("Invalid call to function ", FunctionName(function),
                                                 ", none of its type signatures match (argument ", name, " is of type ",
                                                 TypeName(type), ")"));
}

Type AggregateType(ResultColumn::Holds function, const Type& type) {
  return function == ResultColumn::Holds::kCount ? Type{Kind::kBigint, {}} : type;
}

std::optional<std::string> Aggregate(ResultColumn::Holds function, const Type& type,
                                     const std::vector<std::optional<std::string>>& values) {
  CHARYBDIS_ASSERT(CheckAggregate(function, "", type).ok());  // Prepare checked it
  std::vector<const std::string*> present;
  for (const std::optional<std::string>& value : values) {
    if (value) present.push_back(&*value);
  }
  switch (function) {
    case ResultColumn::Holds::kCount: return NativeBigint(static_cast<int64_t>(present.size()));
    case ResultColumn::Holds::kMin:
    case ResultColumn::Holds::kMax: {
      const std::string* best = nullptr;
      for (const std::string* value : present) {
        const bool before = best != nullptr && ToComparable(type, *value) < ToComparable(type, *best);
        if (best == nullptr || before == (function == ResultColumn::Holds::kMin)) best = value;
      }
      return best == nullptr ? std::nullopt : std::optional<std::string>(*best);
    }
    default: break;
  }
  const bool average = function == ResultColumn::Holds::kAvg;
  if (IsFloating(type.kind)) {
    double sum = 0;
    for (const std::string* value : present) sum += FloatingOf(*value);
    return NativeFloating(type.kind == Kind::kFloat, average && !present.empty() ? sum / static_cast<double>(present.size()) : sum);
  }
  // A sum wraps as Cassandra's long arithmetic does; an average does not
  // (Cassandra's takes a BigInteger): 128 bits hold any sum of 64-bit values.
  __int128 sum = 0;
  for (const std::string* value : present) sum += IntegerOf(*value);
  if (!average || present.empty()) return NativeInteger(type.kind, static_cast<int64_t>(static_cast<uint64_t>(sum)));
  return NativeInteger(type.kind, static_cast<int64_t>(sum / static_cast<__int128>(present.size())));
}

}  // namespace charybdis::cql
