#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace charybdis {

// Microseconds, as Cassandra and ScyllaDB timestamp writes.
using Timestamp = int64_t;

// One version of one column's value: live, expiring or a tombstone.
struct Cell {
  Timestamp timestamp = 0;
  bool tombstone = false;
  std::string value;        // empty for a tombstone
  Timestamp expiry = 0;     // expiring cells: when they expire; 0 if never
  uint32_t ttl_seconds = 0;

  bool operator==(const Cell&) const = default;

  bool expiring() const { return !tombstone && expiry != 0; }
  // Live at `now` (an expired cell reads as deleted).
  bool LiveAt(Timestamp now) const { return !tombstone && (expiry == 0 || now < expiry); }
};

// A non-frozen collection's elements are cells of their own, each named by
// its column, a 0 byte (which no column name holds) and the element's path
// (a set's element, a map's key, a list's position) in hex, so that adding
// an element is a blind write and two clients adding elements both win.
// Hex keeps the name valid UTF-8 for the protos' string fields and orders
// as the path's bytes. A tombstone of the column itself is the
// collection's tombstone: it shadows every element written at or before it
// (Cassandra's complex deletion). Element names sort right after their
// column's own name.
inline constexpr char kPathSeparator = '\0';

std::string ElementCellName(std::string_view column, std::string_view path);
inline bool IsElementCell(std::string_view cell_name) {
  return cell_name.find(kPathSeparator) != std::string_view::npos;
}
// The column a cell belongs to: its name, or an element's column.
inline std::string_view ColumnOfCell(std::string_view cell_name) {
  return cell_name.substr(0, cell_name.find(kPathSeparator));
}
// An element's path. REQUIRES: IsWellFormedCellName(cell_name) and
// IsElementCell(cell_name).
std::string PathOfCell(std::string_view cell_name);
// Whether a cell's name is a column's, or an element's as ElementCellName
// makes them (one 0 byte, then the path in lowercase hex): what a client
// names is checked before it is stored.
bool IsWellFormedCellName(std::string_view cell_name);

// A collection's elements as one string, for conditions that compare a
// whole collection (Condition.compared): each element's path (when
// `with_paths`) and value, length-prefixed, in the order given.
std::string ElementsForm(const std::vector<std::pair<std::string, std::string>>& elements, bool with_paths);

// The path of a list element, unique however many coordinators add to the
// list at once (ScyllaDB #7611 gave two appends one name): its position
// (the time of the coordinator's clock, or of the Paxos ballot, for an
// append; its negation for a prepend, so a later prepend comes first),
// then who named it (`origin`: a coordinator's
// node and shard, or a Paxos ballot's unique part) and a number it used
// once (`sequence`).
std::string ListElementPath(Timestamp position, uint64_t origin, uint64_t sequence);

// A live cell written at `timestamp`; with a TTL it expires that many
// seconds after `now` (both in microseconds).
inline Cell LiveCell(std::string value, Timestamp timestamp, uint32_t ttl_seconds, Timestamp now) {
  Cell cell;
  cell.timestamp = timestamp;
  cell.value = std::move(value);
  if (ttl_seconds > 0) {
    cell.ttl_seconds = ttl_seconds;
    cell.expiry = now + static_cast<Timestamp>(ttl_seconds) * 1'000'000;
  }
  return cell;
}

// Last-write-wins order, as ScyllaDB merges cells: the higher timestamp
// wins; at equal timestamps a tombstone beats a live cell; then an expiring
// cell beats a non-expiring one; then the later expiry; then the larger
// value bytes (unsigned); then the shorter TTL (written later). Returns >0
// if `a` wins, <0 if `b` wins, 0 if they are the same version.
int CompareForMerge(const Cell& a, const Cell& b);

// The winner of two versions.
inline const Cell& Reconcile(const Cell& a, const Cell& b) {
  return CompareForMerge(a, b) >= 0 ? a : b;
}

}  // namespace charybdis
