#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/data/cell.h"
#include "proto/data.pb.h"

namespace charybdis {

struct Row {
  std::optional<Timestamp> tombstone;  // row deletion
  std::map<std::string, Cell> cells;   // by column

  bool operator==(const Row&) const = default;
  // The newest timestamp anywhere in the row (cells or tombstone), or
  // nullopt for an empty row.
  std::optional<Timestamp> NewestTimestamp() const;
  // Drops the elements their collection's tombstone shadows (cell.h).
  void DropShadowedElements();
  // The newest tombstone of the collection an element cell belongs to,
  // if the row holds one. REQUIRES: IsElementCell(cell_name).
  const Cell* CollectionTombstoneOf(std::string_view cell_name) const;
};

// A deletion of the rows whose clustering keys lie in [start, end) (an
// empty end: to the partition's end), as Cassandra's range tombstones: a
// DELETE of a clustering range or prefix, or of the whole partition
// (["", none)). Clustering keys order as bytes in CQL order
// (core/cql/schema.h), so a CQL range is a byte range.
struct ClusteringRange {
  std::string start;
  std::string end;  // empty: no end

  auto operator<=>(const ClusteringRange&) const = default;
  bool Covers(const std::string& clustering_key) const {
    return start <= clustering_key && (end.empty() || clustering_key < end);
  }
  // No key lies in it (its end is not after its start).
  bool empty() const { return !end.empty() && end <= start; }
};

// The rows of one partition of one table that a mutation carries or a read
// returns, ordered by clustering key. Tombstones are kept: they must win
// merges on other replicas too.
struct Partition {
  // Range tombstones: each range's newest deletion. A range tombstone
  // shadows the versions in its range written at or before it, as a row
  // tombstone does its row.
  std::map<ClusteringRange, Timestamp> range_tombstones;
  std::map<std::string, Row> rows;  // by clustering key

  bool operator==(const Partition&) const = default;
  bool empty() const { return rows.empty() && range_tombstones.empty(); }

  // The newest range tombstone covering `clustering_key`, if any.
  std::optional<Timestamp> RangeDeletionOf(const std::string& clustering_key) const;
  // The newest timestamp anywhere in the partition, or nullopt if empty.
  std::optional<Timestamp> NewestTimestamp() const;
  // Last-write-wins merge of `other` into this partition.
  void Merge(const Partition& other);
  // Drops what a row, range or collection tombstone shadows (written at
  // or before it), and rows left with nothing.
  void Compact();
  // What `other` has that this partition lacks or holds an older version
  // of: the mutation that brings a replica holding this up to `other`.
  Partition Missing(const Partition& other) const;

  static Partition FromProto(const PartitionData& data);
  void ToProto(PartitionData* data) const;
};

// A digest of a read result (tombstones included), so replicas holding the
// same data agree without sending it. A read with a limit that stopped
// after the row `read_through` (ReadOp.limit) digests where it stopped
// too: two replicas that sent the same rows but stopped at different
// places hold different data past the first stop.
uint64_t Digest(const Partition& partition, const std::optional<std::string>& read_through = std::nullopt);

}  // namespace charybdis
