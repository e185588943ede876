#include "core/request/result_rows.h"

#include <algorithm>

#include "core/env/assert.h"

namespace charybdis {

ReadColumns::ReadColumns(const google::protobuf::RepeatedPtrField<std::string>& columns)
    : columns_(columns.begin(), columns.end()) {
  CHARYBDIS_ASSERT(columns_.size() <= static_cast<size_t>(columns.size()));
}

bool ReadColumns::Exists(const Row& row, Timestamp now) const {
  for (const auto& [column, cell] : row.cells) {
    if (cell.LiveAt(now) && Includes(column)) return true;
  }
  return false;
}

void AddVisibleRows(const Partition& partition, Timestamp now, const std::set<std::string>* only,
                    const ReadColumns& columns, ClientResponse& response) {
  // Range tombstones too: a read after a partition delete saw its time.
  response.set_newest_timestamp(std::max<Timestamp>(0, partition.NewestTimestamp().value_or(0)));
  Partition visible = partition;
  visible.Compact();
  for (const auto& [key, row] : visible.rows) {
    if (only != nullptr && !only->count(key)) continue;
    ResultRow result;
    result.set_clustering_key(key);
    for (const auto& [column, cell] : row.cells) {
      if (!cell.LiveAt(now) || !columns.Includes(column)) continue;
      ResultCell* out = result.add_cells();
      out->set_column(column);
      out->set_value(cell.value);
      out->set_timestamp(cell.timestamp);
      if (cell.expiring()) {
        constexpr Timestamp kMicrosPerSecond = 1'000'000;
        CHARYBDIS_ASSERT(cell.expiry > now);  // live
        out->set_ttl_left_seconds(static_cast<uint32_t>((cell.expiry - now + kMicrosPerSecond - 1) / kMicrosPerSecond));
      }
    }
    CHARYBDIS_ASSERT(static_cast<size_t>(result.cells_size()) <= row.cells.size());
    CHARYBDIS_ASSERT((result.cells_size() > 0) == columns.Exists(row, now));
    if (result.cells_size() > 0) *response.add_rows() = std::move(result);
  }
}

}  // namespace charybdis
