#pragma once

#include <cstdint>
#include <string>

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
