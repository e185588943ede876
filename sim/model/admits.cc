#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "sim/model/partition_model.h"

namespace charybdis::sim::model {

namespace {

std::string ValueText(const std::optional<Value>& value) { return value ? model::ValueText(*value) : "null"; }

// Whether each column the read returned may hold what it returned.
std::optional<std::string> ColumnsAdmitted(const ExpectedRow& expected, const ObservedRow& observed) {
  for (const auto& [column, value] : observed.columns) {
    auto cell = expected.columns.find(column);
    const bool may_be_null = cell == expected.columns.end() || cell->second.liveness != Liveness::kLive;
    const bool admitted = value ? (cell != expected.columns.end() && cell->second.value == *value) : may_be_null;
    if (!admitted) {
      return absl::StrCat("row ", KeyText(observed.clustering), " column ", column, " read ", ValueText(value),
                          ", the model allows ",
                          cell == expected.columns.end()
                              ? std::string("only null")
                              : absl::StrCat(model::ValueText(cell->second.value), may_be_null ? " or null" : ""));
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> Admits(const std::vector<ExpectedRow>& expected, uint64_t limit,
                                  const std::vector<ObservedRow>& observed) {
  if (limit > 0 && observed.size() > limit) {
    return absl::StrCat(observed.size(), " rows returned under LIMIT ", limit);
  }
  size_t next = 0;  // the next observed row to account for
  for (const ExpectedRow& row : expected) {
    CHARYBDIS_ASSERT(row.exists != Liveness::kDead);
    if (limit > 0 && next == limit) return std::nullopt;  // the limit cut the rest
    if (next < observed.size() && observed[next].clustering == row.clustering) {
      if (auto wrong = ColumnsAdmitted(row, observed[next])) return wrong;
      next++;
      continue;
    }
    if (row.exists == Liveness::kLive) {
      return absl::StrCat("row ", KeyText(row.clustering), " exists but was not returned",
                          next < observed.size() ? absl::StrCat(" (", KeyText(observed[next].clustering), " came instead)")
                                                 : std::string());
    }
  }
  if (next < observed.size()) {
    return absl::StrCat("row ", KeyText(observed[next].clustering),
                        " was returned but the model has no such row there");
  }
  return std::nullopt;
}

}  // namespace charybdis::sim::model
