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
};

// The rows of one partition of one table that a mutation carries or a read
// returns, ordered by clustering key. Tombstones are kept: they must win
// merges on other replicas too.
struct Partition {
  std::map<std::string, Row> rows;  // by clustering key

  bool operator==(const Partition&) const = default;
  bool empty() const { return rows.empty(); }

  // Last-write-wins merge of `other` into this partition.
  void Merge(const Partition& other);
  // Drops cells a row tombstone shadows (written at or before it).
  void Compact();
  // What `other` has that this partition lacks or holds an older version
  // of: the mutation that brings a replica holding this up to `other`.
  Partition Missing(const Partition& other) const;

  static Partition FromProto(const PartitionData& data);
  void ToProto(PartitionData* data) const;
};

// A digest of a read result (tombstones included), so replicas holding the
// same data agree without sending it.
uint64_t Digest(const Partition& partition);

}  // namespace charybdis
