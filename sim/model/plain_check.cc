#include "sim/model/plain_check.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"

namespace charybdis::sim::model {

namespace {

// The row marker's versions are kept as the cell of this name.
constexpr char kMarker[] = "";

// What a read's writes did to one cell: the winner among those it must
// see, and every version it may see (those it must see included).
struct CellVersions {
  std::optional<Version> must_top;
  std::vector<Version> may;
};

void Newest(std::optional<int64_t>& kept, int64_t timestamp_us) {
  kept = std::max(kept.value_or(timestamp_us), timestamp_us);
}

// The newest tombstone a read must see, and the newest it may see.
struct Deletions {
  std::optional<int64_t> must_at_us;
  std::optional<int64_t> may_at_us;

  void Add(bool must, int64_t timestamp_us) {
    if (must) Newest(must_at_us, timestamp_us);
    Newest(may_at_us, timestamp_us);
  }
};

// A set's element is a cell of its own here too, named by its column and
// the element; the set's tombstones shadow its elements as a row's
// tombstones shadow its cells.
std::string ElementCell(const std::string& column, const Value& element) {
  return absl::StrCat(column, "[", ValueText(element), "]");
}
// The set column an element's cell belongs to; "" for a column's own cell.
std::string SetOfCell(const std::string& cell) {
  const size_t bracket = cell.find('[');
  return bracket == std::string::npos ? "" : cell.substr(0, bracket);
}

struct RowVersions {
  Deletions row;                          // row and range tombstones
  std::map<std::string, Deletions> sets;  // each set column's own tombstones
  std::map<std::string, CellVersions> cells;

  // What shadows the cell: the row's tombstones, and an element's set's.
  std::optional<int64_t> MustDeletedAt(const std::string& cell) const { return DeletedAt(cell, &Deletions::must_at_us); }
  std::optional<int64_t> MayDeletedAt(const std::string& cell) const { return DeletedAt(cell, &Deletions::may_at_us); }

 private:
  std::optional<int64_t> DeletedAt(const std::string& cell, std::optional<int64_t> Deletions::*which) const {
    std::optional<int64_t> deleted = row.*which;
    auto set = sets.find(SetOfCell(cell));
    if (set != sets.end() && set->second.*which) Newest(deleted, *(set->second.*which));
    return deleted;
  }
};

void AddVersion(CellVersions& cell, bool must, Version version) {
  if (must && (!cell.must_top || Wins(version, *cell.must_top))) cell.must_top = version;
  cell.may.push_back(std::move(version));
}

// A write's set changes: the set's tombstone, then its elements.
void AddSetWrites(const PlainOp& plain, bool must, RowVersions& row) {
  for (const auto& [column, change] : plain.write.sets) {
    if (change.whole != SetWrite::Whole::kNone) {
      row.sets[column].Add(must, plain.timestamp_us - (change.whole == SetWrite::Whole::kReplace ? 1 : 0));
    }
    for (const Value& element : change.added) {
      AddVersion(row.cells[ElementCell(column, element)], must,
                 Stamped(Value{std::string()}, plain.timestamp_us, plain.write.ttl_seconds, plain.clock));
    }
    for (const Value& element : change.removed) {
      AddVersion(row.cells[ElementCell(column, element)], must, Version{plain.timestamp_us, std::nullopt, std::nullopt});
    }
  }
}

void AddWrite(const PlainOp& plain, bool must, RowVersions& row) {
  const Write& write = plain.write;
  AddSetWrites(plain, must, row);
  auto add = [&](const std::string& column, Version version) { AddVersion(row.cells[column], must, std::move(version)); };
  switch (write.kind) {
    case Write::Kind::kInsert:
      add(kMarker, Stamped(Value{std::string()}, plain.timestamp_us, write.ttl_seconds, plain.clock));
      [[fallthrough]];
    case Write::Kind::kUpdate:
      for (const auto& [column, value] : write.columns) {
        add(column, Stamped(value, plain.timestamp_us, write.ttl_seconds, plain.clock));
      }
      return;
    case Write::Kind::kDeleteRow:
    case Write::Kind::kDeleteRange:  // as a row tombstone on each row of its range
      row.row.Add(must, plain.timestamp_us);
      return;
    case Write::Kind::kDeleteColumns:
      CHARYBDIS_ASSERT(!write.columns.empty() || !write.sets.empty());
      for (const auto& [column, ignored] : write.columns) add(column, Version{plain.timestamp_us, std::nullopt, std::nullopt});
      return;
  }
}

// Some set of the writes leaves `value` in the cell: one it may see, that
// wins over all it must see, and is live at `now`; written at
// `written_at_us` when given (the read asked WRITETIME).
bool CanHold(const RowVersions& row, const std::string& name, const CellVersions& cell, const Value& value, Moment now,
             std::optional<int64_t> written_at_us = std::nullopt) {
  for (const Version& version : cell.may) {
    if (version.value != value) continue;
    if (written_at_us && version.timestamp_us != *written_at_us) continue;
    if (cell.must_top && Wins(*cell.must_top, version)) continue;
    if (VersionLiveness(version, row.MustDeletedAt(name), now) != Liveness::kDead) return true;
  }
  return false;
}

// Some set of the writes leaves the cell dead: those it must see, with
// perhaps a row or set tombstone or a newer dead or expiring version added.
bool CanBeDead(const RowVersions& row, const std::string& name, const CellVersions& cell, Moment now) {
  if (!cell.must_top) return true;
  const std::optional<int64_t> deleted_at_us = row.MayDeletedAt(name);
  if (VersionLiveness(*cell.must_top, deleted_at_us, now) != Liveness::kLive) return true;
  for (const Version& version : cell.may) {
    if (!Wins(version, *cell.must_top)) continue;
    if (VersionLiveness(version, deleted_at_us, now) != Liveness::kLive) return true;
  }
  return false;
}

// What the writes a read must see leave in the cell, for messages.
std::string MustText(const RowVersions& row, const std::string& name, const CellVersions* cell) {
  std::string text = "nothing";
  if (cell != nullptr && cell->must_top) {
    const Version& top = *cell->must_top;
    text = absl::StrCat(top.value ? ValueText(*top.value) : "a tombstone", " at ", top.timestamp_us);
    if (top.expires) absl::StrAppend(&text, " expiring in [", top.expires->earliest_us, ", ", top.expires->latest_us, "] us");
  }
  if (std::optional<int64_t> deleted = row.MustDeletedAt(name)) absl::StrAppend(&text, ", under a tombstone at ", *deleted);
  return text;
}

// Whether the read returned the cell (a column, or a set's element: it
// returned the set).
bool Returned(const ObservedRow& observed, const std::string& name) {
  const std::string set = SetOfCell(name);
  return set.empty() ? name != kMarker && observed.columns.count(name) > 0 : observed.sets.count(set) > 0;
}

// Some set of the writes leaves the row live by a cell the read did not
// return: its marker, or a column it did not select.
bool CanLiveUnread(const RowVersions& row, const ObservedRow& observed, Moment now) {
  for (const auto& [name, cell] : row.cells) {
    if (Returned(observed, name)) continue;
    for (const Version& version : cell.may) {
      if (version.value && CanHold(row, name, cell, *version.value, now)) return true;
    }
  }
  return false;
}

// Each set the read returned holds an element only if some set of the
// writes leaves it there, and every element the writes it must see leave.
std::optional<std::string> SetsAdmitted(const RowVersions& row, const ObservedRow& observed, Moment now) {
  for (const auto& [column, elements] : observed.sets) {
    std::set<std::string> read;
    for (const Value& element : elements) {
      const std::string name = ElementCell(column, element);
      read.insert(name);
      auto found = row.cells.find(name);
      if (found == row.cells.end() || !CanHold(row, name, found->second, Value{std::string()}, now)) {
        return absl::StrCat("row ", KeyText(observed.clustering), " set ", column, " holds ", ValueText(element),
                            "; the writes it must see leave ", MustText(row, name, found == row.cells.end() ? nullptr : &found->second));
      }
    }
    for (const auto& [name, cell] : row.cells) {
      if (SetOfCell(name) != column || read.count(name) > 0 || CanBeDead(row, name, cell, now)) continue;
      return absl::StrCat("row ", KeyText(observed.clustering), " set ", column, " lacks ", name.substr(column.size()),
                          "; the writes it must see leave ", MustText(row, name, &cell));
    }
  }
  return std::nullopt;
}

std::optional<std::string> RowAdmitted(const RowVersions& row, const ObservedRow& observed, Moment now) {
  bool live = false;
  for (const auto& [column, value] : observed.columns) {
    auto found = row.cells.find(column);
    const CellVersions* cell = found == row.cells.end() ? nullptr : &found->second;
    auto written = observed.written_at_us.find(column);
    const std::optional<int64_t> written_at_us =
        written == observed.written_at_us.end() ? std::nullopt : std::optional<int64_t>(written->second);
    const bool admitted = value ? cell != nullptr && CanHold(row, column, *cell, *value, now, written_at_us)
                                : !written_at_us && (cell == nullptr || CanBeDead(row, column, *cell, now));
    if (!admitted) {
      return absl::StrCat("row ", KeyText(observed.clustering), " column ", column, " read ",
                          value ? ValueText(*value) : "null",
                          written_at_us ? absl::StrCat(" written at ", *written_at_us) : "",
                          "; the writes it must see leave ", MustText(row, column, cell));
    }
    live = live || value.has_value();
  }
  if (auto wrong = SetsAdmitted(row, observed, now)) return wrong;
  for (const auto& [column, elements] : observed.sets) live = live || !elements.empty();
  if (!live && !CanLiveUnread(row, observed, now)) {
    return absl::StrCat("row ", KeyText(observed.clustering), " was returned with no live cell and no live row marker");
  }
  return std::nullopt;
}

bool CanBeAbsent(const RowVersions& row, Moment now) {
  for (const auto& [name, cell] : row.cells) {
    if (!CanBeDead(row, name, cell, now)) return false;
  }
  return true;
}

// The rows returned are in the slice, in its order, each once.
std::optional<std::string> Ordered(const PlainOp& read, const ClusteringOrder& order) {
  for (size_t i = 0; i < read.rows.size(); i++) {
    const Key& key = read.rows[i].clustering;
    if (!order.InSlice(key, read.slice)) return absl::StrCat("row ", KeyText(key), " is outside the slice");
    if (i == 0) continue;
    const Key& previous = read.rows[i - 1].clustering;
    if (!(read.slice.reversed ? order.Before(key, previous) : order.Before(previous, key))) {
      return absl::StrCat("row ", KeyText(key), " came after row ", KeyText(previous), ": out of order, or twice");
    }
  }
  if (read.slice.limit > 0 && read.rows.size() > read.slice.limit) {
    return absl::StrCat(read.rows.size(), " rows returned under LIMIT ", read.slice.limit);
  }
  return std::nullopt;
}

// A COUNT(*) counts at least the rows that must exist and at most those
// that can: each row's cells are judged apart, as for a read of its rows.
std::optional<std::string> CountAdmitted(const PlainOp& read, const std::map<Key, RowVersions>& rows) {
  CHARYBDIS_ASSERT(read.count.has_value());
  int64_t must = 0, may = 0;
  for (const auto& [key, row] : rows) {
    must += !CanBeAbsent(row, read.clock);
    may += CanLiveUnread(row, ObservedRow{}, read.clock);
  }
  CHARYBDIS_ASSERT(must <= may);
  if (*read.count >= must && *read.count <= may) return std::nullopt;
  return absl::StrCat("counted ", *read.count, " rows; the writes it may see leave ", must, " to ", may);
}

std::optional<std::string> CheckRead(const PlainOp& read, const std::vector<const PlainOp*>& writes,
                                     const ClusteringOrder& order, uint32_t replication_factor) {
  CHARYBDIS_ASSERT(read.outcome == LwtOp::Outcome::kOk);
  CHARYBDIS_ASSERT(read.call_us <= read.return_us);
  if (auto wrong = Ordered(read, order)) return wrong;
  std::map<Key, RowVersions> rows;
  std::vector<std::pair<const PlainOp*, bool>> range_deletions;  // each with whether the read must see it
  for (const PlainOp* write : writes) {
    if (write->outcome == LwtOp::Outcome::kFail || write->call_us >= read.return_us) continue;
    const bool must = write->outcome == LwtOp::Outcome::kOk && write->return_us < read.call_us &&
                      write->replicas + read.replicas > replication_factor;
    if (write->write.kind == Write::Kind::kDeleteRange) {
      range_deletions.emplace_back(write, must);
      continue;
    }
    if (!order.InSlice(write->write.clustering, read.slice)) continue;
    AddWrite(*write, must, rows[write->write.clustering]);
  }
  // A range deletion matters only to rows some write made.
  for (const auto& [deletion, must] : range_deletions) {
    for (auto& [key, row] : rows) {
      if (order.InSlice(key, deletion->write.range)) AddWrite(*deletion, must, row);
    }
  }
  if (read.count) return CountAdmitted(read, rows);
  std::vector<Key> keys;  // in the slice's order
  for (const auto& [key, ignored] : rows) keys.push_back(key);
  std::sort(keys.begin(), keys.end(), [&](const Key& a, const Key& b) { return order.Before(a, b); });
  if (read.slice.reversed) std::reverse(keys.begin(), keys.end());
  const bool limited = read.slice.limit > 0 && read.rows.size() == read.slice.limit;
  size_t next = 0;  // the next returned row to account for
  for (const Key& key : keys) {
    if (next < read.rows.size() && read.rows[next].clustering == key) {
      if (auto wrong = RowAdmitted(rows[key], read.rows[next], read.clock)) return wrong;
      next++;
      continue;
    }
    if (limited && next == read.rows.size()) break;  // the LIMIT cut the rest
    if (!CanBeAbsent(rows[key], read.clock)) {
      return absl::StrCat("row ", KeyText(key), " must exist but was not returned");
    }
  }
  if (next < read.rows.size()) {
    return absl::StrCat("row ", KeyText(read.rows[next].clustering), " was returned, but no write it may see made it");
  }
  return std::nullopt;
}

}  // namespace

PlainCheckResult CheckPlainReads(const std::vector<PlainOp>& operations, const std::vector<bool>& descending,
                                 uint32_t replication_factor) {
  CHARYBDIS_ASSERT(replication_factor > 0);
  const ClusteringOrder order(descending);
  std::map<std::string, std::vector<const PlainOp*>> writes;  // by partition
  for (const PlainOp& op : operations) {
    if (op.kind == PlainOp::Kind::kWrite) writes[op.partition].push_back(&op);
  }
  PlainCheckResult result;
  for (const PlainOp& op : operations) {
    if (op.kind == PlainOp::Kind::kWrite) {
      result.writes++;
      continue;
    }
    if (op.outcome != LwtOp::Outcome::kOk) continue;
    result.reads++;
    auto wrong = CheckRead(op, writes[op.partition], order, replication_factor);
    if (wrong && result.admitted) {
      result.admitted = false;
      result.detail = absl::StrCat("partition ", op.partition, ": ", op.text, " (called at ", op.call_us,
                                   " us, returned at ", op.return_us, " us): ", *wrong);
    }
  }
  return result;
}

}  // namespace charybdis::sim::model
