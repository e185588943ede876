#include "core/data/tombstone_gc.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"

namespace charybdis {

namespace {

constexpr Timestamp kMicrosPerSecond = 1'000'000;
constexpr Timestamp kNothing = std::numeric_limits<Timestamp>::min();

}  // namespace

const char* TombstoneGcModeName(TombstoneGc::Mode mode) {
  switch (mode) {
    case TombstoneGc::Mode::kTimeout:
      return "timeout";
    case TombstoneGc::Mode::kRepair:
      return "repair";
    case TombstoneGc::Mode::kImmediate:
      return "immediate";
    case TombstoneGc::Mode::kDisabled:
      return "disabled";
  }
  CHARYBDIS_ASSERT(false && "a mode of its own");
  return "";
}

absl::StatusOr<TombstoneGc::Mode> ParseTombstoneGcMode(std::string_view name) {
  for (TombstoneGc::Mode mode : {TombstoneGc::Mode::kTimeout, TombstoneGc::Mode::kRepair,
                                 TombstoneGc::Mode::kImmediate, TombstoneGc::Mode::kDisabled}) {
    if (name == TombstoneGcModeName(mode)) return mode;
  }
  return absl::InvalidArgumentError(absl::StrCat("tombstone_gc mode '", std::string(name),
                                                 "' is none of timeout, repair, immediate and disabled"));
}

absl::StatusOr<TombstoneGc> TombstoneGcOf(std::string_view mode, std::optional<uint32_t> gc_grace_seconds,
                                          std::optional<uint32_t> propagation_delay_seconds) {
  TombstoneGc gc;
  if (!mode.empty()) {
    const absl::StatusOr<TombstoneGc::Mode> parsed = ParseTombstoneGcMode(mode);
    if (!parsed.ok()) return parsed.status();
    gc.mode = *parsed;
  }
  if (gc_grace_seconds) gc.gc_grace_seconds = *gc_grace_seconds;
  if (propagation_delay_seconds) gc.propagation_delay_seconds = *propagation_delay_seconds;
  return gc;
}

Timestamp PurgeBefore(const TombstoneGc& gc, Timestamp now_us, Timestamp repaired_us) {
  CHARYBDIS_ASSERT(gc.gc_grace_seconds >= 0 && gc.propagation_delay_seconds >= 0 && repaired_us >= 0);
  Timestamp before = kNothing;
  switch (gc.mode) {
    case TombstoneGc::Mode::kTimeout:
      before = now_us - gc.gc_grace_seconds * kMicrosPerSecond;
      break;
    case TombstoneGc::Mode::kRepair:
      if (repaired_us > 0) before = repaired_us - gc.propagation_delay_seconds * kMicrosPerSecond;
      break;
    case TombstoneGc::Mode::kImmediate:
      before = now_us;
      break;
    case TombstoneGc::Mode::kDisabled:
      break;
  }
  return std::min(before, now_us);
}

void DropPurgeable(Partition& partition, Timestamp purge_before) {
  std::erase_if(partition.range_tombstones, [&](const auto& entry) { return entry.second < purge_before; });
  for (auto row = partition.rows.begin(); row != partition.rows.end();) {
    if (row->second.tombstone && *row->second.tombstone < purge_before) row->second.tombstone.reset();
    std::erase_if(row->second.cells, [&](const auto& cell) { return PurgeableCell(cell.second, purge_before); });
    const bool empty = !row->second.tombstone && row->second.cells.empty();
    row = empty ? partition.rows.erase(row) : std::next(row);
  }
}

bool DropOlderThan(Partition& partition, Timestamp purge_before) {
  bool dropped =
      std::erase_if(partition.range_tombstones, [&](const auto& entry) { return entry.second < purge_before; }) > 0;
  for (auto row = partition.rows.begin(); row != partition.rows.end();) {
    if (row->second.tombstone && *row->second.tombstone < purge_before) {
      row->second.tombstone.reset();
      dropped = true;
    }
    dropped |= std::erase_if(row->second.cells, [&](const auto& cell) { return cell.second.timestamp < purge_before; }) > 0;
    const bool empty = !row->second.tombstone && row->second.cells.empty();
    row = empty ? partition.rows.erase(row) : std::next(row);
  }
  return dropped;
}

}  // namespace charybdis
