#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace charybdis::sim::model {

// The reference model of one partition of one CQL table: what its rows
// hold after a sequence of writes, and what a read or a condition may see
// at a given moment. It is written apart from core/ (no core type, no
// storage encoding) and kept simple enough to check by reading, so that
// the checkers can hold core/ against it (docs/scenarios.md, "The
// reference model"). Semantics, as docs/cql.md and docs/lwt.md state them:
// - last write wins per cell: the higher timestamp; at a tie a tombstone,
//   then an expiring cell, then the later expiry, then the larger value;
// - a row tombstone shadows every cell and row marker written at or
//   before its timestamp, and a range tombstone (a DELETE of a slice of
//   clustering keys, or of the whole partition) every row in its slice;
// - an INSERT writes a row marker (the row exists while it lives); an
//   UPDATE does not;
// - a TTL makes cells (and an INSERT's marker) expire TTL seconds after
//   the moment of the write.
// Time is uncertain: a moment is a window, since an operation takes effect
// somewhere between its call and its return, by a node clock that may be
// skewed. A cell whose expiry window overlaps the reader's moment is
// "maybe" live, and the checks accept either reading of it.

// int and bigint as numbers, text as bytes. Values of one column have one
// type, so the variant's order is CQL's order within a column.
using Value = std::variant<int64_t, std::string>;
// A clustering key: one value per clustering column.
using Key = std::vector<Value>;

// Somewhere in [earliest_us, latest_us] of cluster time.
struct Moment {
  int64_t earliest_us = 0;
  int64_t latest_us = 0;
  auto operator<=>(const Moment&) const = default;
};

enum class Liveness { kDead, kMaybe, kLive };
Liveness AnyOf(Liveness a, Liveness b);
Liveness AllOf(Liveness a, Liveness b);
Liveness Not(Liveness a);

// One version of a cell (or of a row marker, whose value is empty text).
struct Version {
  int64_t timestamp_us = 0;
  std::optional<Value> value;      // nullopt: a tombstone
  std::optional<Moment> expires;   // with a TTL: when it expires
  auto operator<=>(const Version&) const = default;
};

// Whether `a` wins over `b` by last-write-wins (false when they are equal).
bool Wins(const Version& a, const Version& b);

// The version a write makes: a TTL expires `ttl_seconds` after `now`
// (none on a tombstone).
Version Stamped(std::optional<Value> value, int64_t timestamp_us, int64_t ttl_seconds, Moment now);
// Whether the version is live at `now`, under a row tombstone at
// `deleted_at_us` if any.
Liveness VersionLiveness(const Version& version, std::optional<int64_t> deleted_at_us, Moment now);

struct Row {
  std::optional<Version> marker;
  std::optional<int64_t> deleted_at_us;  // the newest row tombstone
  std::map<std::string, Version> cells;  // by column
  auto operator<=>(const Row&) const = default;
};

// A slice of the partition's rows: clustering keys in [low, high] by the
// table's order (a missing bound is open; a bound shorter than the key is
// a prefix) whose first column is one of `first_in` if given (IN),
// reversed for ORDER BY DESC, at most `limit` rows (0: all).
struct Slice {
  std::optional<Key> low;
  bool low_inclusive = true;
  std::optional<Key> high;
  bool high_inclusive = true;
  bool reversed = false;
  uint64_t limit = 0;
  std::optional<std::vector<Value>> first_in;
  auto operator<=>(const Slice&) const = default;
};

// What one write does to a set column (a non-frozen set: each element a
// cell of its own, docs/cql.md "Collections"): the set's tombstone, then
// its elements added and removed. Set whole (`s = {...}`, an INSERT), the
// tombstone is one microsecond before the write, so the elements it adds
// outlive it; deleted (`DELETE s`, `s = null`), at the write's time.
struct SetWrite {
  enum class Whole { kNone, kReplace, kDelete };
  Whole whole = Whole::kNone;
  std::vector<Value> added;
  std::vector<Value> removed;
};

// One statement's effect on one row, or on a slice of rows.
struct Write {
  enum class Kind { kInsert, kUpdate, kDeleteRow, kDeleteColumns, kDeleteRange };
  Kind kind = Kind::kInsert;
  Key clustering;  // none for kDeleteRange
  // kInsert, kUpdate: each column's new value (nullopt writes a
  // tombstone, as `SET c = null` does); kDeleteColumns: the columns.
  std::map<std::string, std::optional<Value>> columns;
  int64_t ttl_seconds = 0;  // 0: none
  Slice range;              // kDeleteRange: its bounds (no IN, no limit)
  // kInsert, kUpdate, kDeleteColumns: set columns, by name (plain writes
  // only: the LWT model has none).
  std::map<std::string, SetWrite> sets;
};

// A row as a read may see it: whether it exists, and each column that may
// hold a value (columns absent here are certainly null).
struct ExpectedCell {
  Liveness liveness = Liveness::kLive;
  Value value;
};
struct ExpectedRow {
  Key clustering;
  Liveness exists = Liveness::kLive;
  std::map<std::string, ExpectedCell> columns;
};

// A row as a read returned it: nullopt is null.
struct ObservedRow {
  Key clustering;
  std::map<std::string, std::optional<Value>> columns;
  // WRITETIME of columns read with it (absent: not asked, or null).
  std::map<std::string, int64_t> written_at_us;
  // The set columns read with it, each with its elements (none: null).
  std::map<std::string, std::vector<Value>> sets;
};

// A condition of a conditional statement on one row.
struct Condition {
  enum class Op { kEq, kNe, kLt, kLe, kGt, kGe };
  std::string column;
  Op op = Op::kEq;
  Value value;
};
struct RowCondition {
  enum class Kind { kIfNotExists, kIfExists, kColumns };
  Kind kind = Kind::kIfNotExists;
  Key clustering;
  std::vector<Condition> conditions;  // kColumns
};

// The table's clustering order: `descending[i]`, column i is DESC.
class ClusteringOrder {
 public:
  explicit ClusteringOrder(std::vector<bool> descending) : descending_(std::move(descending)) {}
  bool Before(const Key& a, const Key& b) const;
  bool InSlice(const Key& clustering, const Slice& slice) const;
  size_t columns() const { return descending_.size(); }
  auto operator<=>(const ClusteringOrder&) const = default;

 private:
  std::vector<bool> descending_;
};

class PartitionModel {
 public:
  // `descending[i]`: clustering column i is ordered DESC.
  explicit PartitionModel(std::vector<bool> descending = {});

  void Apply(const Write& write, int64_t timestamp_us, Moment now);

  Liveness Exists(const Key& clustering, Moment now) const;
  // Whether the condition holds on the row as it is at `now`.
  Liveness Holds(const RowCondition& condition, Moment now) const;
  // The rows of the slice as a read at `now` may see them, in the slice's
  // order, leaving out rows that certainly do not exist (the limit is
  // left to Admits: which rows it cuts depends on which maybes exist).
  std::vector<ExpectedRow> Read(const Slice& slice, Moment now) const;

  const std::map<Key, Row>& rows() const { return rows_; }
  auto operator<=>(const PartitionModel&) const = default;

 private:
  ExpectedRow Expect(const Key& clustering, const Row& row, Moment now) const;

  // The newest range tombstone over `clustering`, or its row's, if any.
  std::optional<int64_t> DeletedAt(const Key& clustering, const Row& row) const;

  ClusteringOrder order_;
  std::map<Key, Row> rows_;  // by natural key order; Read sorts by the table's
  std::vector<std::pair<Slice, int64_t>> range_deletions_;  // each with its timestamp
};

// Whether a read that returned `observed` is one that `expected` (from
// PartitionModel::Read) admits under `limit` (0: none); nullopt if so,
// else why not.
std::optional<std::string> Admits(const std::vector<ExpectedRow>& expected, uint64_t limit,
                                  const std::vector<ObservedRow>& observed);

std::string ValueText(const Value& value);
std::string KeyText(const Key& key);

}  // namespace charybdis::sim::model
