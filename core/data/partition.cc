#include "core/data/partition.h"

#include <algorithm>

#include "core/env/assert.h"
#include "core/data/murmur3.h"

namespace charybdis {

std::optional<Timestamp> Row::NewestTimestamp() const {
  std::optional<Timestamp> newest = tombstone;
  for (const auto& [column, cell] : cells) {
    if (!newest || cell.timestamp > *newest) newest = cell.timestamp;
  }
  CHARYBDIS_ASSERT(newest.has_value() == (tombstone.has_value() || !cells.empty()));
  return newest;
}

const Cell* Row::CollectionTombstoneOf(std::string_view cell_name) const {
  CHARYBDIS_ASSERT(IsElementCell(cell_name));
  auto it = cells.find(std::string(ColumnOfCell(cell_name)));
  if (it == cells.end() || !it->second.tombstone) return nullptr;
  return &it->second;
}

void Row::DropShadowedElements() {
  // A column's own cell sorts right before its elements (cell.h).
  const std::pair<const std::string, Cell>* collection_tombstone = nullptr;
  for (auto it = cells.begin(); it != cells.end();) {
    if (!IsElementCell(it->first)) {
      collection_tombstone = it->second.tombstone ? &*it : nullptr;
      ++it;
      continue;
    }
    const bool of_it = collection_tombstone != nullptr && ColumnOfCell(it->first) == collection_tombstone->first;
    CHARYBDIS_ASSERT(of_it == (CollectionTombstoneOf(it->first) != nullptr));
    const bool shadowed = of_it && it->second.timestamp <= collection_tombstone->second.timestamp;
    it = shadowed ? cells.erase(it) : std::next(it);
  }
}

std::optional<Timestamp> Partition::RangeDeletionOf(const std::string& clustering_key) const {
  std::optional<Timestamp> newest;
  // Ranges that start above the key cannot cover it; the rest are few.
  for (const auto& [range, timestamp] : range_tombstones) {
    if (clustering_key < range.start) break;
    if (range.Covers(clustering_key) && (!newest || timestamp > *newest)) newest = timestamp;
  }
  return newest;
}

std::optional<Timestamp> Partition::NewestTimestamp() const {
  std::optional<Timestamp> newest;
  for (const auto& [range, timestamp] : range_tombstones) newest = std::max(newest.value_or(timestamp), timestamp);
  for (const auto& [key, row] : rows) {
    const std::optional<Timestamp> of_row = row.NewestTimestamp();
    if (of_row) newest = std::max(newest.value_or(*of_row), *of_row);
  }
  CHARYBDIS_ASSERT(newest.has_value() || range_tombstones.empty());
  return newest;
}

void Partition::Merge(const Partition& other) {
  for (const auto& [range, timestamp] : other.range_tombstones) {
    auto [it, inserted] = range_tombstones.emplace(range, timestamp);
    if (!inserted) it->second = std::max(it->second, timestamp);
    CHARYBDIS_ASSERT(it->second >= timestamp);
  }
  for (const auto& [key, incoming] : other.rows) {
    Row& row = rows[key];
    if (incoming.tombstone && (!row.tombstone || *incoming.tombstone > *row.tombstone)) {
      row.tombstone = incoming.tombstone;
    }
    CHARYBDIS_ASSERT(row.tombstone >= incoming.tombstone);  // nullopt orders first
    for (const auto& [column, cell] : incoming.cells) {
      auto [it, inserted] = row.cells.emplace(column, cell);
      if (!inserted) it->second = Reconcile(it->second, cell);
      CHARYBDIS_ASSERT(CompareForMerge(it->second, cell) >= 0);
    }
  }
}

void Partition::Compact() {
  for (auto row = rows.begin(); row != rows.end();) {
    std::optional<Timestamp> deleted = RangeDeletionOf(row->first);
    // A row tombstone a range one shadows goes too: it deletes no more.
    if (row->second.tombstone && deleted && *row->second.tombstone <= *deleted) row->second.tombstone.reset();
    if (row->second.tombstone) deleted = std::max(deleted.value_or(*row->second.tombstone), *row->second.tombstone);
    if (deleted) {
      std::erase_if(row->second.cells, [&](const auto& entry) { return entry.second.timestamp <= *deleted; });
    }
    row->second.DropShadowedElements();
    const bool empty = !row->second.tombstone && row->second.cells.empty();
    row = empty ? rows.erase(row) : std::next(row);
  }
}

Partition Partition::Missing(const Partition& other) const {
  Partition missing;
  for (const auto& [range, timestamp] : other.range_tombstones) {
    auto mine = range_tombstones.find(range);
    if (mine == range_tombstones.end() || timestamp > mine->second) missing.range_tombstones[range] = timestamp;
  }
  for (const auto& [key, theirs] : other.rows) {
    auto mine = rows.find(key);
    Row delta;
    const std::optional<Timestamp> my_tombstone =
        mine == rows.end() ? std::nullopt : mine->second.tombstone;
    if (theirs.tombstone && (!my_tombstone || *theirs.tombstone > *my_tombstone)) {
      delta.tombstone = theirs.tombstone;
    }
    for (const auto& [column, cell] : theirs.cells) {
      const Cell* my_cell = nullptr;
      if (mine != rows.end()) {
        auto it = mine->second.cells.find(column);
        if (it != mine->second.cells.end()) my_cell = &it->second;
      }
      if (my_cell == nullptr || CompareForMerge(cell, *my_cell) > 0) delta.cells[column] = cell;
    }
    if (delta.tombstone || !delta.cells.empty()) missing.rows[key] = std::move(delta);
  }
  CHARYBDIS_ASSERT(missing.rows.size() <= other.rows.size());
  CHARYBDIS_ASSERT(missing.range_tombstones.size() <= other.range_tombstones.size());
  return missing;
}

Partition Partition::FromProto(const PartitionData& data) {
  Partition partition;
  for (const RangeTombstoneData& deletion : data.range_tombstones()) {
    auto [it, inserted] =
        partition.range_tombstones.emplace(ClusteringRange{deletion.start(), deletion.end()}, deletion.timestamp());
    if (!inserted) it->second = std::max(it->second, deletion.timestamp());
  }
  for (const RowData& row_data : data.rows()) {
    Row& row = partition.rows[row_data.clustering_key()];
    if (row_data.has_tombstone()) row.tombstone = row_data.tombstone_timestamp();
    for (const CellData& cell : row_data.cells()) {
      row.cells[cell.column()] =
          Cell{cell.timestamp(), cell.tombstone(), cell.value(), cell.expiry(), cell.ttl_seconds()};
    }
  }
  CHARYBDIS_ASSERT(partition.rows.size() <= static_cast<size_t>(data.rows_size()));
  return partition;
}

void Partition::ToProto(PartitionData* data) const {
  for (const auto& [range, timestamp] : range_tombstones) {
    RangeTombstoneData* deletion = data->add_range_tombstones();
    deletion->set_start(range.start);
    deletion->set_end(range.end);
    deletion->set_timestamp(timestamp);
  }
  for (const auto& [key, row] : rows) {
    RowData* row_data = data->add_rows();
    row_data->set_clustering_key(key);
    if (row.tombstone) {
      row_data->set_has_tombstone(true);
      row_data->set_tombstone_timestamp(*row.tombstone);
    }
    for (const auto& [column, cell] : row.cells) {
      CellData* cell_data = row_data->add_cells();
      cell_data->set_column(column);
      cell_data->set_timestamp(cell.timestamp);
      cell_data->set_tombstone(cell.tombstone);
      cell_data->set_value(cell.value);
      cell_data->set_expiry(cell.expiry);
      cell_data->set_ttl_seconds(cell.ttl_seconds);
    }
    CHARYBDIS_ASSERT(static_cast<size_t>(row_data->cells_size()) == row.cells.size());
  }
}

namespace {

void AppendFixed64(std::string& out, uint64_t value) {
  char bytes[8];
  for (int i = 0; i < 8; i++) bytes[i] = static_cast<char>(value >> (8 * i));
  out.append(bytes, 8);
}

void AppendBytes(std::string& out, const std::string& bytes) {
  AppendFixed64(out, bytes.size());
  out += bytes;
}

}  // namespace

uint64_t Digest(const Partition& partition, const std::optional<std::string>& read_through) {
  // A canonical encoding (maps are ordered), hashed once.
  std::string encoded;
  encoded.reserve(128);
  AppendFixed64(encoded, partition.range_tombstones.size());
  for (const auto& [range, timestamp] : partition.range_tombstones) {
    AppendBytes(encoded, range.start);
    AppendBytes(encoded, range.end);
    AppendFixed64(encoded, static_cast<uint64_t>(timestamp));
  }
  for (const auto& [key, row] : partition.rows) {
    AppendBytes(encoded, key);
    encoded.push_back(row.tombstone ? 'T' : 't');
    AppendFixed64(encoded, static_cast<uint64_t>(row.tombstone.value_or(0)));
    AppendFixed64(encoded, row.cells.size());
    for (const auto& [column, cell] : row.cells) {
      AppendBytes(encoded, column);
      AppendFixed64(encoded, static_cast<uint64_t>(cell.timestamp));
      encoded.push_back(cell.tombstone ? 'D' : 'L');
      AppendBytes(encoded, cell.value);
      AppendFixed64(encoded, static_cast<uint64_t>(cell.expiry));
      AppendFixed64(encoded, cell.ttl_seconds);
    }
  }
  if (read_through) {
    encoded.push_back('C');
    AppendBytes(encoded, *read_through);
  }
  return CassandraMurmur3(encoded).low;
}

}  // namespace charybdis
