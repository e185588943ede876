#include "core/data/storage_codec.h"

#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "core/data/big_endian.h"
#include "core/data/checked_value.h"
#include "core/data/murmur3.h"
#include "core/data/token.h"
#include "core/data/tombstone_gc.h"
#include "core/env/assert.h"

namespace charybdis::storage_codec {

namespace {

constexpr char kDataTag = 'd';
constexpr char kPaxosTag = 'x';
constexpr char kRowTombstoneTag = 'r';
constexpr char kCellTag = 'c';
// Begins no escaped component: where a partition's range tombstones go.
constexpr std::string_view kRangeTombstoneMark("\0\0", 2);
// So they sort right before the partition's rows, the first of which (the
// empty clustering key, escaped) begins 0x00 0x01: where they end.
static_assert(kRangeTombstoneMark.size() == 2 && kRangeTombstoneMark[1] + 1 == '\x01');

void AppendEscaped(std::string& out, std::string_view component) {
  for (char c : component) {
    out.push_back(c);
    if (c == '\0') out.push_back('\xff');
  }
  out.push_back('\0');
  out.push_back('\x01');
  CHARYBDIS_ASSERT(out.size() >= component.size() + 2);
}

// Signed timestamps and tokens in byte order: flip the sign bit.
uint64_t Biased(int64_t signed_value) {
  return static_cast<uint64_t>(signed_value) ^ (uint64_t{1} << 63);
}
int64_t Unbiased(uint64_t biased) { return static_cast<int64_t>(biased ^ (uint64_t{1} << 63)); }

std::string EncodeCellValue(const Cell& cell) {
  std::string value;
  value.push_back(cell.tombstone ? 'D' : 'L');
  AppendBigEndian(value, static_cast<uint64_t>(cell.expiry), 8);
  AppendBigEndian(value, cell.ttl_seconds, 8);
  value += cell.value;
  CHARYBDIS_ASSERT(value.size() == 17 + cell.value.size());
  return value;
}

// Reads the components of a stored key in turn.
class KeyReader {
 public:
  explicit KeyReader(std::string_view key) : rest_(key) {}

  bool Tag(char* tag) {
    if (rest_.empty()) return false;
    *tag = rest_.front();
    rest_.remove_prefix(1);
    return true;
  }
  bool Escaped(std::string* out) {
    out->clear();
    while (rest_.size() >= 2) {
      const char c = rest_[0];
      if (c != '\0') {
        out->push_back(c);
        rest_.remove_prefix(1);
      } else if (rest_[1] == '\xff') {
        out->push_back('\0');
        rest_.remove_prefix(2);
      } else if (rest_[1] == '\x01') {
        rest_.remove_prefix(2);
        return true;
      } else {
        return false;
      }
    }
    return false;
  }
  // Takes `mark` if the rest begins with it.
  bool Mark(std::string_view mark) {
    if (rest_.substr(0, mark.size()) != mark) return false;
    rest_.remove_prefix(mark.size());
    return true;
  }
  bool BigEndian64(uint64_t* value) {
    if (rest_.size() < 8) return false;
    *value = ReadBigEndian(rest_, 8);
    rest_.remove_prefix(8);
    return true;
  }
  bool done() const { return rest_.empty(); }

 private:
  std::string_view rest_;
};

}  // namespace

std::string TablePrefix(const std::string& table) {
  std::string prefix(1, kDataTag);
  AppendEscaped(prefix, table);
  CHARYBDIS_ASSERT(prefix.size() >= table.size() + 3);
  return prefix;
}

std::string TokenPrefix(const std::string& table, Token token) {
  std::string prefix = TablePrefix(table);
  AppendBigEndian(prefix, Biased(token), 8);
  CHARYBDIS_ASSERT(prefix.size() >= table.size() + 11);
  return prefix;
}

std::string TokenRangeEnd(const std::string& table, Token token) {
  if (token == std::numeric_limits<Token>::max()) return PrefixEnd(TablePrefix(table));
  return TokenPrefix(table, token + 1);
}

std::string PartitionPrefix(const std::string& table, const std::string& partition_key) {
  std::string prefix = TokenPrefix(table, TokenOf(partition_key));
  AppendEscaped(prefix, partition_key);
  CHARYBDIS_ASSERT(prefix.size() >= table.size() + partition_key.size() + 13);
  return prefix;
}

std::optional<StoredRow> RowOfKey(std::string_view key) {
  KeyReader reader(key);
  char tag = 0;
  std::string table;
  uint64_t biased = 0;
  StoredRow row;
  if (!reader.Tag(&tag) || tag != kDataTag || !reader.Escaped(&table) || !reader.BigEndian64(&biased) ||
      !reader.Escaped(&row.partition_key)) {
    return std::nullopt;
  }
  row.range_tombstones = reader.Mark(kRangeTombstoneMark);
  if (!row.range_tombstones && !reader.Escaped(&row.clustering_key)) return std::nullopt;
  row.token = Unbiased(biased);
  return row;
}

std::string RowPrefix(const std::string& table, const std::string& partition_key,
                      const std::string& clustering_key) {
  std::string prefix = PartitionPrefix(table, partition_key);
  AppendEscaped(prefix, clustering_key);
  CHARYBDIS_ASSERT(prefix.size() >= table.size() + partition_key.size() + clustering_key.size() + 15);
  return prefix;
}

std::string RangeTombstonePrefix(const std::string& table, const std::string& partition_key) {
  std::string prefix = PartitionPrefix(table, partition_key);
  prefix += kRangeTombstoneMark;
  return prefix;
}

std::string PaxosKey(const std::string& table, const std::string& partition_key) {
  std::string key(1, kPaxosTag);
  AppendEscaped(key, table);
  AppendEscaped(key, partition_key);
  CHARYBDIS_ASSERT(key.size() >= table.size() + partition_key.size() + 5);
  return key;
}

std::string PaxosPrefix() { return std::string(1, kPaxosTag); }

std::string PaxosTablePrefix(const std::string& table) {
  std::string prefix(1, kPaxosTag);
  AppendEscaped(prefix, table);
  return prefix;
}

std::optional<std::string> PartitionOfPaxosKey(std::string_view key, const std::string& table) {
  KeyReader reader(key);
  char tag = 0;
  std::string key_table, partition_key;
  if (!reader.Tag(&tag) || tag != kPaxosTag || !reader.Escaped(&key_table) || key_table != table ||
      !reader.Escaped(&partition_key) || !reader.done()) {
    return std::nullopt;
  }
  return partition_key;
}

bool IsPartitionRange(const std::string& begin, const std::string& end) {
  // `begin` must name a partition (its prefix, or a key inside it).
  KeyReader reader(begin);
  char tag = 0;
  std::string table, partition_key;
  uint64_t biased = 0;
  if (!reader.Tag(&tag) || tag != kDataTag || !reader.Escaped(&table) || !reader.BigEndian64(&biased) ||
      !reader.Escaped(&partition_key)) {
    return false;
  }
  return begin < end && end <= PrefixEnd(PartitionPrefix(table, partition_key));
}

std::string PrefixEnd(const std::string& prefix) {
  std::string end = prefix;
  while (!end.empty() && end.back() == '\xff') end.pop_back();
  if (!end.empty()) end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
  CHARYBDIS_ASSERT(end.size() <= prefix.size());
  CHARYBDIS_ASSERT(end.empty() || prefix < end);
  return end;  // empty: no upper bound
}

void AddMutation(const std::string& table, const std::string& partition_key,
                 const Partition& partition, WriteBatch& batch) {
  for (const auto& [range, timestamp] : partition.range_tombstones) {
    std::string key = RangeTombstonePrefix(table, partition_key);
    AppendEscaped(key, range.start);
    AppendEscaped(key, range.end);
    AppendBigEndian(key, Biased(timestamp), 8);
    std::string sealed = checked_value::Seal(key, "");
    CHARYBDIS_ASSERT(sealed.size() == 8);  // the checksum alone
    batch.Put(std::move(key), std::move(sealed));
  }
  for (const auto& [clustering_key, row] : partition.rows) {
    const std::string row_prefix = RowPrefix(table, partition_key, clustering_key);
    if (row.tombstone) {
      std::string key = row_prefix;
      key.push_back(kRowTombstoneTag);
      AppendBigEndian(key, Biased(*row.tombstone), 8);
      CHARYBDIS_ASSERT(key.size() == row_prefix.size() + 9);
      std::string sealed = checked_value::Seal(key, "");
      CHARYBDIS_ASSERT(sealed.size() == 8);  // the checksum alone
      batch.Put(std::move(key), std::move(sealed));
    }
    for (const auto& [column, cell] : row.cells) {
      std::string value = EncodeCellValue(cell);
      std::string key = row_prefix;
      key.push_back(kCellTag);
      AppendEscaped(key, column);
      AppendBigEndian(key, Biased(cell.timestamp), 8);
      AppendBigEndian(key, CassandraMurmur3(value).low, 8);
      CHARYBDIS_ASSERT(key.size() >= row_prefix.size() + column.size() + 19);
      std::string sealed = checked_value::Seal(key, value);
      CHARYBDIS_ASSERT(sealed.size() == value.size() + 8);
      batch.Put(std::move(key), std::move(sealed));
    }
  }
}

namespace {

// Adds one stored version to the partition being decoded; false when the
// entry is not one this codec wrote (then nothing was added).
class ScanDecoder {
 public:
  explicit ScanDecoder(Decoded& decoded) : decoded_(decoded) {}

  bool Add(const KeyValue& entry, std::string_view value) {
    KeyReader reader(entry.key);
    char tag = 0;
    uint64_t biased = 0;
    if (!reader.Tag(&tag) || tag != kDataTag || !reader.Escaped(&table_) || !reader.BigEndian64(&biased) ||
        !reader.Escaped(&partition_key_)) {
      return false;
    }
    if (reader.Mark(kRangeTombstoneMark)) {
      ClusteringRange range;
      if (!reader.Escaped(&range.start) || !reader.Escaped(&range.end) || !reader.BigEndian64(&biased) ||
          !reader.done() || !value.empty()) {
        return false;
      }
      AddRangeTombstone(entry.key, std::move(range), Unbiased(biased));
      return true;
    }
    if (!reader.Escaped(&clustering_key_) || !reader.Tag(&tag)) return false;
    if (tag == kRowTombstoneTag) {
      if (!reader.BigEndian64(&biased) || !reader.done() || !value.empty()) return false;
      AddRowTombstone(entry.key, Unbiased(biased));
      return true;
    }
    uint64_t hash = 0;
    if (tag != kCellTag || !reader.Escaped(&column_) || !reader.BigEndian64(&biased) ||
        !reader.BigEndian64(&hash) || !reader.done() || value.size() < 17) {
      return false;
    }
    Cell cell;
    cell.timestamp = Unbiased(biased);
    cell.tombstone = value[0] == 'D';
    cell.expiry = static_cast<Timestamp>(ReadBigEndian(value.substr(1), 8));
    cell.ttl_seconds = static_cast<uint32_t>(ReadBigEndian(value.substr(9), 8));
    cell.value = std::string(value.substr(17));
    CHARYBDIS_ASSERT(cell.value.size() == value.size() - 17);
    AddCell(entry.key, std::move(cell));
    return true;
  }

  // Where each row's tombstone and each cell's winner is stored.
  void ListWinners() {
    for (const auto& [key, stored] : cell_keys_) decoded_.cell_keys[key] = *stored;
    for (const auto& [key, stored] : tombstone_keys_) decoded_.row_tombstone_keys[key] = *stored;
    for (const auto& [range, stored] : range_keys_) decoded_.range_tombstone_keys[range] = *stored;
  }

  // Cells at or before a tombstone of their row, its range or their
  // collection, and row tombstones at or before one of their range, can
  // never be seen again.
  void ListShadowedVersions() {
    for (const auto& [key, tombstone_key] : tombstone_keys_) {
      const std::optional<Timestamp> deleted = decoded_.partition.RangeDeletionOf(key);
      if (deleted && *decoded_.partition.rows.at(key).tombstone <= *deleted) {
        decoded_.obsolete_keys.push_back(*tombstone_key);
      }
    }
    for (const auto& [key, cell_key] : cell_keys_) {
      CHARYBDIS_ASSERT(cell_key != nullptr);
      CHARYBDIS_ASSERT(decoded_.partition.rows.count(key.first) == 1);
      const Row& row = decoded_.partition.rows[key.first];
      std::optional<Timestamp> deleted = decoded_.partition.RangeDeletionOf(key.first);
      if (row.tombstone) deleted = std::max(deleted.value_or(*row.tombstone), *row.tombstone);
      if (IsElementCell(key.second)) {
        // An element at or before its collection's tombstone, too.
        const Cell* collection = row.CollectionTombstoneOf(key.second);
        if (collection != nullptr) deleted = std::max(deleted.value_or(collection->timestamp), collection->timestamp);
      }
      if (deleted && row.cells.at(key.second).timestamp <= *deleted) decoded_.obsolete_keys.push_back(*cell_key);
    }
  }

 private:
  void AddRangeTombstone(const std::string& key, ClusteringRange range, Timestamp timestamp) {
    const std::string*& winner = range_keys_[range];
    auto [it, inserted] = decoded_.partition.range_tombstones.emplace(std::move(range), timestamp);
    // A range has a stored winner exactly when it was decoded before.
    CHARYBDIS_ASSERT(inserted == (winner == nullptr));
    if (inserted) {
      winner = &key;
    } else if (timestamp > it->second) {
      decoded_.obsolete_keys.push_back(*winner);
      it->second = timestamp;
      winner = &key;
    } else if (key != *winner) {
      decoded_.obsolete_keys.push_back(key);
    }
    CHARYBDIS_ASSERT(winner != nullptr);
  }

  void AddRowTombstone(const std::string& key, Timestamp timestamp) {
    Row& row = decoded_.partition.rows[clustering_key_];
    const std::string*& winner = tombstone_keys_[clustering_key_];
    // A row has a tombstone exactly when a stored one was kept for it.
    CHARYBDIS_ASSERT(row.tombstone.has_value() == (winner != nullptr));
    if (!row.tombstone || timestamp > *row.tombstone) {
      if (winner != nullptr) decoded_.obsolete_keys.push_back(*winner);
      row.tombstone = timestamp;
      winner = &key;
    } else if (key != *winner) {
      decoded_.obsolete_keys.push_back(key);
    }
    CHARYBDIS_ASSERT(winner != nullptr);
    CHARYBDIS_ASSERT(row.tombstone.has_value());
  }

  void AddCell(const std::string& key, Cell cell) {
    Row& row = decoded_.partition.rows[clustering_key_];
    const std::string*& winner = cell_keys_[{clustering_key_, column_}];
    auto [it, inserted] = row.cells.emplace(column_, cell);
    // A cell has a stored winner exactly when it was decoded before.
    CHARYBDIS_ASSERT(inserted == (winner == nullptr));
    if (inserted) {
      winner = &key;
    } else if (CompareForMerge(cell, it->second) > 0) {
      decoded_.obsolete_keys.push_back(*winner);
      it->second = std::move(cell);
      winner = &key;
    } else if (key != *winner) {  // a distinct, losing version
      decoded_.obsolete_keys.push_back(key);
    }
    CHARYBDIS_ASSERT(winner != nullptr);
  }

  Decoded& decoded_;
  // Which stored key holds the current winner of each cell and each row's
  // tombstone, to list the losers.
  std::map<std::pair<std::string, std::string>, const std::string*> cell_keys_;
  std::map<std::string, const std::string*> tombstone_keys_;
  std::map<ClusteringRange, const std::string*> range_keys_;
  std::string table_, partition_key_, clustering_key_, column_;
};

}  // namespace

Decoded DecodeScan(const std::vector<KeyValue>& stored) {
  Decoded decoded;
  ScanDecoder decoder(decoded);
  for (const KeyValue& entry : stored) {
    const std::optional<std::string_view> value = checked_value::Open(entry.key, entry.value);
    if (!value || !decoder.Add(entry, *value)) decoded.corrupt_keys.push_back(entry.key);
  }
  CHARYBDIS_ASSERT(decoded.corrupt_keys.size() <= stored.size());
  decoder.ListShadowedVersions();
  decoder.ListWinners();
  // Replicas that did and did not drop shadowed versions yet must agree.
  decoded.partition.Compact();
  return decoded;
}

Purge PurgedKeys(const Decoded& decoded, Timestamp purge_before,
                 const std::set<std::string>* purgeable_range_tombstones) {
  CHARYBDIS_ASSERT(decoded.corrupt_keys.empty());
  std::set<std::string> purged(decoded.obsolete_keys.begin(), decoded.obsolete_keys.end());
  uint64_t deletions = 0;
  for (const auto& [range, timestamp] : decoded.partition.range_tombstones) {
    // What it shadows here is obsolete already (ListShadowedVersions).
    const std::string& key = decoded.range_tombstone_keys.at(range);
    if (timestamp >= purge_before) continue;
    if (purgeable_range_tombstones != nullptr && !purgeable_range_tombstones->count(key)) continue;
    purged.insert(key);
    deletions++;
  }
  for (const auto& [clustering_key, row] : decoded.partition.rows) {
    // Older tombstones and the cells a tombstone shadows are obsolete: they
    // go with it.
    if (row.tombstone && *row.tombstone < purge_before) {
      purged.insert(decoded.row_tombstone_keys.at(clustering_key));
      deletions++;
    }
    for (const auto& [column, cell] : row.cells) {
      // Its older versions lost to it: they are obsolete.
      if (!PurgeableCell(cell, purge_before)) continue;
      purged.insert(decoded.cell_keys.at({clustering_key, column}));
      deletions++;
    }
  }
  return Purge{std::vector<std::string>(purged.begin(), purged.end()), deletions};
}

void DropKeys(Storage& storage, const std::vector<std::string>& keys) {
  if (keys.empty()) return;
  WriteBatch batch;
  for (const std::string& key : keys) batch.Delete(key);
  storage.Apply(std::move(batch), Durability::kUnsynced, [](absl::Status) {});
}

}  // namespace charybdis::storage_codec
