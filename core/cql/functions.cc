#include "core/cql/functions.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "core/cql/literal.h"
#include "core/data/big_endian.h"
#include "core/env/assert.h"

namespace charybdis::cql {
namespace {

// 100-ns intervals from the Gregorian calendar's start (1582-10-15) to the
// Unix epoch: a version 1 UUID counts from the former.
constexpr uint64_t kGregorianToUnix = 0x01B21DD213814000ULL;

absl::Status WrongType(const std::string& name, const Type& result, const Type& type) {
  return absl::InvalidArgumentError(absl::StrCat("Type error: cannot assign result of function system.", name, " (type ",
                                                 TypeName(result), ") to a value of type ", TypeName(type)));
}

// The one argument of a conversion, a timeuuid: now(), or a constant.
absl::StatusOr<int64_t> TimeUuidArgument(const Term& term, const FunctionSources& sources) {
  if (term.elements.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("Invalid number of arguments in call to function ", term.text,
                                                   ": 1 required but ", term.elements.size(), " provided"));
  }
  const Term& argument = term.elements[0];
  const Type timeuuid{Kind::kTimeuuid, {}};
  absl::StatusOr<std::string> uuid;
  if (argument.kind == Term::Kind::kFunction) {
    uuid = CallFunction(argument, timeuuid, sources);
  } else {
    absl::StatusOr<std::optional<std::string>> literal = LiteralValue(timeuuid, argument);
    if (!literal.ok()) return literal.status();
    if (!literal->has_value()) return absl::InvalidArgumentError(absl::StrCat(term.text, "() of null"));
    uuid = **literal;
  }
  if (!uuid.ok()) return uuid.status();
  return MicrosOfTimeUuid(*uuid);
}

}  // namespace

std::string TimeUuid(int64_t micros, uint64_t random) {
  const uint64_t time = static_cast<uint64_t>(micros) * 10 + kGregorianToUnix;
  std::string uuid;
  AppendBigEndian(uuid, time & 0xFFFFFFFF, 4);                         // time_low
  AppendBigEndian(uuid, (time >> 32) & 0xFFFF, 2);                     // time_mid
  AppendBigEndian(uuid, ((time >> 48) & 0x0FFF) | 0x1000, 2);          // version 1, time_hi
  AppendBigEndian(uuid, ((random >> 48) & 0x3FFF) | 0x8000, 2);        // variant, clock sequence
  AppendBigEndian(uuid, (random & 0xFFFFFFFFFFFF) | (uint64_t{1} << 40), 6);  // a random node: multicast bit set
  CHARYBDIS_ASSERT(uuid.size() == 16);
  return uuid;
}

int64_t MicrosOfTimeUuid(const std::string& uuid) {
  CHARYBDIS_ASSERT(uuid.size() == 16);  // a validated timeuuid
  const uint64_t low = ReadBigEndian(uuid, 4);
  const uint64_t mid = ReadBigEndian(uuid.substr(4), 2);
  const uint64_t high = ReadBigEndian(uuid.substr(6), 2) & 0x0FFF;
  const uint64_t time = (high << 48) | (mid << 32) | low;
  // Signed: a timeuuid may be from before 1970; floored, as Cassandra's.
  const int64_t since_epoch = static_cast<int64_t>(time) - static_cast<int64_t>(kGregorianToUnix);
  return since_epoch >= 0 ? since_epoch / 10 : -((-since_epoch + 9) / 10);
}

absl::StatusOr<std::string> CallFunction(const Term& term, const Type& type, const FunctionSources& sources) {
  CHARYBDIS_ASSERT(term.kind == Term::Kind::kFunction);
  const std::string name = absl::AsciiStrToLower(term.text);
  const bool conversion = name == "totimestamp" || name == "tounixtimestamp" || name == "todate";
  if (!conversion && !term.elements.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("Invalid number of arguments in call to function ", name,
                                                   ": 0 required but ", term.elements.size(), " provided"));
  }
  const auto fits = [&](Kind result, std::initializer_list<Kind> accepted) -> absl::Status {
    for (Kind kind : accepted) {
      if (type.kind == kind) return absl::OkStatus();
    }
    return WrongType(name, Type{result, {}}, type);
  };
  const auto date = [](int64_t micros) {
    const int64_t days = micros >= 0 ? micros / 86'400'000'000 : -((-micros + 86'399'999'999) / 86'400'000'000);
    std::string out;
    AppendBigEndian(out, static_cast<uint32_t>(days + (int64_t{1} << 31)), 4);  // date: days from 2^31
    return out;
  };
  if (name == "now" || name == "uuid") {
    // A timeuuid is a uuid too; uuid() is version 4, random.
    if (absl::Status ok = name == "now" ? fits(Kind::kTimeuuid, {Kind::kTimeuuid, Kind::kUuid}) : fits(Kind::kUuid, {Kind::kUuid}); !ok.ok()) return ok;
    if (name == "now") return TimeUuid(sources.now_us(), sources.random());
    std::string uuid;
    AppendBigEndian(uuid, (sources.random() & ~uint64_t{0xF000}) | 0x4000, 8);
    AppendBigEndian(uuid, (sources.random() & ~(uint64_t{0xC} << 60)) | (uint64_t{0x8} << 60), 8);
    return uuid;
  }
  if (name == "currenttimestamp" || name == "currentdate") {
    const bool timestamp = name == "currenttimestamp";
    if (absl::Status ok = fits(timestamp ? Kind::kTimestamp : Kind::kDate, {timestamp ? Kind::kTimestamp : Kind::kDate}); !ok.ok()) return ok;
    return timestamp ? NativeBigint(sources.now_us() / 1000) : date(sources.now_us());
  }
  if (!conversion) return absl::InvalidArgumentError(absl::StrCat("Unknown function ", name, " called"));
  const Kind result = name == "todate" ? Kind::kDate : name == "totimestamp" ? Kind::kTimestamp : Kind::kBigint;
  if (absl::Status ok = fits(result, {result}); !ok.ok()) return ok;
  absl::StatusOr<int64_t> micros = TimeUuidArgument(term, sources);
  if (!micros.ok()) return micros.status();
  return result == Kind::kDate ? date(*micros) : NativeBigint(*micros / 1000);
}

}  // namespace charybdis::cql
