#pragma once

// CQL's data types: their names, their option ids on the wire, their
// native (protocol) encoding, and the comparable form we store, in which
// unsigned byte order is CQL's order of the values (section 6 of the v4
// spec; docs/cql.md). Pure.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/cql/wire.h"

namespace charybdis::cql {

// The option ids of the protocol ([option] in section 4.2.5.2).
enum class Kind : uint16_t {
  kAscii = 0x0001,
  kBigint = 0x0002,
  kBlob = 0x0003,
  kBoolean = 0x0004,
  kDecimal = 0x0006,
  kDouble = 0x0007,
  kFloat = 0x0008,
  kInt = 0x0009,
  kTimestamp = 0x000B,
  kUuid = 0x000C,
  kText = 0x000D,
  kVarint = 0x000E,
  kTimeuuid = 0x000F,
  kInet = 0x0010,
  kDate = 0x0011,
  kSmallint = 0x0013,
  kTinyint = 0x0014,
  kList = 0x0020,
  kMap = 0x0021,
  kSet = 0x0022,
};

struct Type {
  Kind kind = Kind::kBlob;
  // Collections: the element type (list, set), or key then value (map).
  std::vector<Type> params;
  // A frozen collection is one value, stored and written whole; a
  // non-frozen one is stored one cell per element (core/data/cell.h).
  bool frozen = false;

  bool operator==(const Type& other) const {
    return kind == other.kind && params == other.params && frozen == other.frozen;
  }
  bool is_collection() const { return kind == Kind::kList || kind == Kind::kMap || kind == Kind::kSet; }
  // A collection stored one cell per element.
  bool multi_cell() const { return is_collection() && !frozen; }
};

// "int", "varchar", "map<text, int>", "frozen<set<text>>". The elements of
// a collection are scalars or frozen collections; a set's elements and a
// map's keys are of an ordered type (IsOrdered), as they name cells.
std::optional<Type> ParseType(std::string_view name);
// The name system_schema.columns shows ("text" for varchar).
std::string TypeName(const Type& type);
void WriteTypeOption(Writer& out, const Type& type);

// Whether `native` is a well-formed value of a scalar type.
absl::Status ValidateNative(const Type& type, std::string_view native);
// Whether the comparable form orders values as CQL does; decimal does not
// (docs/cql.md), so it can be neither a clustering column nor compared.
bool IsOrdered(const Type& type);

// The stored form of a value, and back. REQUIRES: a valid value. A
// collection's is its native form made canonical (a set's elements and a
// map's keys in order, once each), so that equal values store alike.
std::string ToComparable(const Type& type, std::string_view native);
std::string FromComparable(const Type& type, std::string_view comparable);

// The elements of a list's or set's native value (nullopt if malformed).
std::optional<std::vector<std::string>> SplitCollection(std::string_view native);
// The entries of a map's native value (nullopt if malformed).
std::optional<std::vector<std::pair<std::string, std::string>>> SplitMap(std::string_view native);

// Native values of the types the system tables serve.
std::string NativeInt(int32_t value);
std::string NativeBigint(int64_t value);
std::string NativeBoolean(bool value);
// A float's value (`single`) or a double's.
std::string NativeFloating(bool single, double value);
// A list or set of native elements, or a map of native keys to values.
std::string NativeCollection(const std::vector<std::string>& elements);
std::string NativeMap(const std::vector<std::pair<std::string, std::string>>& entries);

}  // namespace charybdis::cql
