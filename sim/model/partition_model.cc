#include "sim/model/partition_model.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"

namespace charybdis::sim::model {

Liveness AnyOf(Liveness a, Liveness b) { return std::max(a, b); }
Liveness AllOf(Liveness a, Liveness b) { return std::min(a, b); }
Liveness Not(Liveness a) {
  if (a == Liveness::kMaybe) return a;
  return a == Liveness::kLive ? Liveness::kDead : Liveness::kLive;
}

bool Wins(const Version& a, const Version& b) {
  if (a.timestamp_us != b.timestamp_us) return a.timestamp_us > b.timestamp_us;
  if (a.value.has_value() != b.value.has_value()) return !a.value.has_value();
  if (a.expires.has_value() != b.expires.has_value()) return a.expires.has_value();
  if (a.expires != b.expires) return *a.expires > *b.expires;
  return a.value > b.value;
}

PartitionModel::PartitionModel(std::vector<bool> descending) : order_(std::move(descending)) {}

Version Stamped(std::optional<Value> value, int64_t timestamp_us, int64_t ttl_seconds, Moment now) {
  CHARYBDIS_ASSERT(ttl_seconds >= 0);
  Version version{timestamp_us, std::move(value), std::nullopt};
  // Cassandra: a tombstone has no TTL.
  if (ttl_seconds > 0 && version.value) {
    const int64_t ttl_us = ttl_seconds * 1'000'000;
    version.expires = Moment{now.earliest_us + ttl_us, now.latest_us + ttl_us};
  }
  return version;
}

Liveness VersionLiveness(const Version& version, std::optional<int64_t> deleted_at_us, Moment now) {
  if (!version.value) return Liveness::kDead;
  if (deleted_at_us && version.timestamp_us <= *deleted_at_us) return Liveness::kDead;
  if (!version.expires) return Liveness::kLive;
  // Expired once now >= expiry; both are windows.
  if (now.latest_us < version.expires->earliest_us) return Liveness::kLive;
  if (now.earliest_us >= version.expires->latest_us) return Liveness::kDead;
  return Liveness::kMaybe;
}

namespace {

void Keep(std::optional<Version>& kept, Version candidate) {
  if (!kept || Wins(candidate, *kept)) kept = std::move(candidate);
}

}  // namespace

void PartitionModel::Apply(const Write& write, int64_t timestamp_us, Moment now) {
  CHARYBDIS_ASSERT(now.earliest_us <= now.latest_us);
  if (write.kind == Write::Kind::kDeleteRange) {
    CHARYBDIS_ASSERT(write.clustering.empty() && !write.range.first_in && write.range.limit == 0);
    range_deletions_.emplace_back(write.range, timestamp_us);
    return;
  }
  CHARYBDIS_ASSERT(write.clustering.size() == order_.columns());
  CHARYBDIS_ASSERT(write.sets.empty());  // conditional writes set no set column
  Row& row = rows_[write.clustering];
  switch (write.kind) {
    case Write::Kind::kInsert:
      Keep(row.marker, Stamped(Value{std::string()}, timestamp_us, write.ttl_seconds, now));
      [[fallthrough]];
    case Write::Kind::kUpdate:
      for (const auto& [column, value] : write.columns) {
        std::optional<Version> kept;
        if (auto it = row.cells.find(column); it != row.cells.end()) kept = it->second;
        Keep(kept, Stamped(value, timestamp_us, write.ttl_seconds, now));
        row.cells[column] = *kept;
      }
      return;
    case Write::Kind::kDeleteRow:
      row.deleted_at_us = std::max(row.deleted_at_us.value_or(timestamp_us), timestamp_us);
      return;
    case Write::Kind::kDeleteColumns:
      CHARYBDIS_ASSERT(!write.columns.empty());
      for (const auto& [column, ignored] : write.columns) {
        std::optional<Version> kept;
        if (auto it = row.cells.find(column); it != row.cells.end()) kept = it->second;
        Keep(kept, Version{timestamp_us, std::nullopt, std::nullopt});
        row.cells[column] = *kept;
      }
      return;
    case Write::Kind::kDeleteRange:
      break;
  }
  CHARYBDIS_ASSERT(false && "a range deletion applies above");
}

std::optional<int64_t> PartitionModel::DeletedAt(const Key& clustering, const Row& row) const {
  std::optional<int64_t> deleted = row.deleted_at_us;
  for (const auto& [range, timestamp_us] : range_deletions_) {
    if (order_.InSlice(clustering, range)) deleted = std::max(deleted.value_or(timestamp_us), timestamp_us);
  }
  return deleted;
}

ExpectedRow PartitionModel::Expect(const Key& clustering, const Row& row, Moment now) const {
  ExpectedRow expected{clustering, Liveness::kDead, {}};
  const std::optional<int64_t> deleted_at_us = DeletedAt(clustering, row);
  if (row.marker) expected.exists = VersionLiveness(*row.marker, deleted_at_us, now);
  for (const auto& [column, version] : row.cells) {
    const Liveness liveness = VersionLiveness(version, deleted_at_us, now);
    expected.exists = AnyOf(expected.exists, liveness);
    if (liveness != Liveness::kDead) expected.columns[column] = ExpectedCell{liveness, *version.value};
  }
  return expected;
}

Liveness PartitionModel::Exists(const Key& clustering, Moment now) const {
  auto it = rows_.find(clustering);
  return it == rows_.end() ? Liveness::kDead : Expect(clustering, it->second, now).exists;
}

namespace {

bool Compares(Condition::Op op, const Value& stored, const Value& given) {
  switch (op) {
    case Condition::Op::kEq: return stored == given;
    case Condition::Op::kNe: return stored != given;
    case Condition::Op::kLt: return stored < given;
    case Condition::Op::kLe: return stored <= given;
    case Condition::Op::kGt: return stored > given;
    case Condition::Op::kGe: return stored >= given;
  }
  CHARYBDIS_ASSERT(false);
  return false;
}

// A condition on a column that may hold `cell` (nullptr: certainly null).
// A null column satisfies only `!=` (docs/lwt.md).
Liveness ConditionHolds(const Condition& condition, const ExpectedCell* cell) {
  const bool holds_on_null = condition.op == Condition::Op::kNe;
  if (cell == nullptr) return holds_on_null ? Liveness::kLive : Liveness::kDead;
  const bool holds_on_value = Compares(condition.op, cell->value, condition.value);
  if (cell->liveness == Liveness::kLive || holds_on_value == holds_on_null) {
    return holds_on_value ? Liveness::kLive : Liveness::kDead;
  }
  return Liveness::kMaybe;
}

}  // namespace

Liveness PartitionModel::Holds(const RowCondition& condition, Moment now) const {
  auto it = rows_.find(condition.clustering);
  const ExpectedRow row = it == rows_.end() ? ExpectedRow{condition.clustering, Liveness::kDead, {}}
                                            : Expect(condition.clustering, it->second, now);
  switch (condition.kind) {
    case RowCondition::Kind::kIfNotExists:
      return Not(row.exists);
    case RowCondition::Kind::kIfExists:
      return row.exists;
    case RowCondition::Kind::kColumns: {
      CHARYBDIS_ASSERT(!condition.conditions.empty());
      Liveness holds = Liveness::kLive;
      for (const Condition& each : condition.conditions) {
        auto cell = row.columns.find(each.column);
        holds = AllOf(holds, ConditionHolds(each, cell == row.columns.end() ? nullptr : &cell->second));
      }
      return holds;
    }
  }
  CHARYBDIS_ASSERT(false);
  return Liveness::kDead;
}

namespace {

// <0, 0, >0 over the first `length` columns, each in its own direction.
int CompareColumns(const Key& a, const Key& b, size_t length, const std::vector<bool>& descending) {
  for (size_t i = 0; i < length; i++) {
    if (a[i] == b[i]) continue;
    const bool less = a[i] < b[i];
    return (less != descending[i]) ? -1 : 1;
  }
  return 0;
}

}  // namespace

bool ClusteringOrder::Before(const Key& a, const Key& b) const {
  CHARYBDIS_ASSERT(a.size() == descending_.size());
  CHARYBDIS_ASSERT(b.size() == descending_.size());
  return CompareColumns(a, b, a.size(), descending_) < 0;
}

bool ClusteringOrder::InSlice(const Key& clustering, const Slice& slice) const {
  if (slice.first_in &&
      std::find(slice.first_in->begin(), slice.first_in->end(), clustering.at(0)) == slice.first_in->end()) {
    return false;
  }
  if (slice.low) {
    CHARYBDIS_ASSERT(slice.low->size() <= clustering.size());
    const int order = CompareColumns(clustering, *slice.low, slice.low->size(), descending_);
    if (order < 0 || (order == 0 && !slice.low_inclusive)) return false;
  }
  if (slice.high) {
    CHARYBDIS_ASSERT(slice.high->size() <= clustering.size());
    const int order = CompareColumns(clustering, *slice.high, slice.high->size(), descending_);
    if (order > 0 || (order == 0 && !slice.high_inclusive)) return false;
  }
  return true;
}

std::vector<ExpectedRow> PartitionModel::Read(const Slice& slice, Moment now) const {
  std::vector<ExpectedRow> rows;
  for (const auto& [clustering, row] : rows_) {
    if (!order_.InSlice(clustering, slice)) continue;
    ExpectedRow expected = Expect(clustering, row, now);
    if (expected.exists != Liveness::kDead) rows.push_back(std::move(expected));
  }
  std::sort(rows.begin(), rows.end(),
            [this](const ExpectedRow& a, const ExpectedRow& b) { return order_.Before(a.clustering, b.clustering); });
  if (slice.reversed) std::reverse(rows.begin(), rows.end());
  return rows;
}

std::string ValueText(const Value& value) {
  if (const int64_t* number = std::get_if<int64_t>(&value)) return absl::StrCat(*number);
  return absl::StrCat("'", std::get<std::string>(value), "'");
}

std::string KeyText(const Key& key) {
  std::string text = "(";
  for (size_t i = 0; i < key.size(); i++) absl::StrAppend(&text, i > 0 ? ", " : "", ValueText(key[i]));
  return text + ")";
}

}  // namespace charybdis::sim::model
