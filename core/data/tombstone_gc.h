#pragma once

// When a deletion may leave a replica's storage for good (docs/repair.md,
// "Tombstone GC"). A tombstone shadows older versions on replicas that
// may not have seen it yet: purged before every replica holds it, the
// data it deleted comes back from them (a zombie). ScyllaDB's modes:
//
//   timeout    after gc_grace_seconds (Cassandra's only rule): safe only
//              if every replica is repaired within that time;
//   repair     once a repair that began at least propagation_delay after
//              the deletion covered its token (ScyllaDB's default, and
//              ours): every replica held it then;
//   immediate  at once (tables that are never deleted from, only expire);
//   disabled   never.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/data/cell.h"
#include "core/data/partition.h"
#include "core/data/token.h"

namespace charybdis {

struct TombstoneGc {
  enum class Mode { kTimeout, kRepair, kImmediate, kDisabled };
  Mode mode = Mode::kRepair;
  int64_t gc_grace_seconds = 864000;  // 10 days, as Cassandra and ScyllaDB
  // Writes may arrive late or carry a client's timestamp from the past: a
  // repair counts for deletions made this long before it began.
  int64_t propagation_delay_seconds = 3600;

  bool operator==(const TombstoneGc&) const = default;
};

const char* TombstoneGcModeName(TombstoneGc::Mode mode);
absl::StatusOr<TombstoneGc::Mode> ParseTombstoneGcMode(std::string_view name);
// A table's GC from a config's fields (a scenario's table, a node
// config's): the mode's name ("": the default) and, when set, the grace
// and the propagation delay.
absl::StatusOr<TombstoneGc> TombstoneGcOf(std::string_view mode, std::optional<uint32_t> gc_grace_seconds,
                                          std::optional<uint32_t> propagation_delay_seconds);

// Deletions made before the time returned may be purged now (`now_us`, the
// replica's clock) from a token whose newest repair, at the topology the
// replica holds, began at `repaired_us` (0: none): range, row and cell tombstones
// by their timestamp, expiring cells by their expiry. Never after now.
Timestamp PurgeBefore(const TombstoneGc& gc, Timestamp now_us, Timestamp repaired_us);

// For a shard: PurgeBefore for a token of a table, by the table's GC, the
// shard's clock and its repair history.
using PurgeHorizon = std::function<Timestamp(const std::string& table, Token token)>;

// Whether a purge before `purge_before` lets the deletion `cell` go (a
// tombstone by its timestamp, an expiring cell by its expiry); a row
// tombstone goes when its timestamp is before it.
inline bool PurgeableCell(const Cell& cell, Timestamp purge_before) {
  return (cell.tombstone && cell.timestamp < purge_before) || (cell.expiring() && cell.expiry < purge_before);
}

// `partition` (reconciled, compacted) as a replica that purged holds it:
// without the deletions a purge before `purge_before` lets go. Reads and
// repair's hashes show this view, so that a replica that purged and one
// that has not yet agree, and read repair never writes a purgeable
// tombstone back (ScyllaDB #24332, CASSANDRA-8979).
void DropPurgeable(Partition& partition, Timestamp purge_before);

// Drops from `partition` every version, live or deleted, written before
// `purge_before`: what a late write (a hint's replay) brings from before a
// purge, which a tombstone already let go may have shadowed. Returns
// whether it dropped any.
bool DropOlderThan(Partition& partition, Timestamp purge_before);

}  // namespace charybdis
