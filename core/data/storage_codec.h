#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/data/partition.h"
#include "core/env/storage.h"
#include "core/data/token.h"

namespace charybdis {

// How a shard keeps table data in its ordered key-value storage.
//
// Every version of every cell (and every row tombstone) is its own key, as
// in an LSM tree: a write is a blind put, never a read-modify-write, so
// concurrent writes to one cell cannot lose each other, and replaying the
// same mutation (a hint, a duplicate message) writes the same keys again.
// Reads scan the partition (or row) and reconcile the versions.
//
//   'd' esc(table) be64(token) esc(partition key) esc(clustering key)
//       'r' be64(ts)
//   'd' esc(table) be64(token) esc(partition key) esc(clustering key)
//       'c' esc(column) be64(ts) be64(hash of the version)
//   'd' esc(table) be64(token) esc(partition key) 0x00 0x00
//       esc(range start) esc(range end) be64(ts)
//
// The last is a range tombstone. 0x00 0x00 begins no escaped component,
// so a partition's range tombstones sort before its rows, and a read of
// rows reads them from there too (RangeTombstonePrefix).
//
// The partition key's token (sign bit flipped, so byte order is token
// order) puts a table's partitions in ring order: a token range is one
// contiguous scan, as full-table scans by token() need.
//
// Every value ends in the checksum of core/data/checked_value.h.
//
// esc() escapes 0x00 as 0x00 0xff and ends with 0x00 0x01, which keeps
// byte order and makes every component self-delimiting.
namespace storage_codec {

// The layout below, by version: 2 put the token in data keys; 3 added
// range tombstones. A store holds the version it was written in under
// kFormatKey (node/ checks it when it opens one), so a build never reads
// keys of another layout as corrupt and drops them. A store of format 2
// holds no key format 3 does not read: opened, it is marked 3, which a
// build of format 2 (that would drop range tombstones) then refuses.
inline constexpr char kFormatKey[] = "system/storage_format";
inline constexpr char kFormatVersion[] = "3";
inline constexpr char kUpgradableFormat[] = "2";

std::string TablePrefix(const std::string& table);
// The first key of a table's partitions whose token is `token` or above.
std::string TokenPrefix(const std::string& table, Token token);
// The first key after every key of a table's partitions whose token is
// `token` or below.
std::string TokenRangeEnd(const std::string& table, Token token);
std::string PartitionPrefix(const std::string& table, const std::string& partition_key);
std::string RowPrefix(const std::string& table, const std::string& partition_key,
                      const std::string& clustering_key);
// The prefix of a partition's range tombstones: every read of its rows
// reads them too. They end where its first row begins: PrefixEnd of it is
// RowPrefix(table, partition_key, "").
std::string RangeTombstonePrefix(const std::string& table, const std::string& partition_key);
// Where an acceptor keeps a partition's Paxos state ('x' esc(table)
// esc(partition key)), and the prefix of all of them.
std::string PaxosKey(const std::string& table, const std::string& partition_key);
std::string PaxosPrefix();
// The prefix of one table's Paxos states, and the partition a Paxos key of
// that table names (nullopt: not one of the table's).
std::string PaxosTablePrefix(const std::string& table);
std::optional<std::string> PartitionOfPaxosKey(std::string_view key, const std::string& table);

// The row a stored data key belongs to (nullopt: not a data key). A
// range tombstone's key belongs to its partition's range tombstones, which
// sort before its rows (as a row of their own would, with an empty
// clustering key).
struct StoredRow {
  Token token = 0;
  std::string partition_key;
  std::string clustering_key;
  bool range_tombstones = false;
};
std::optional<StoredRow> RowOfKey(std::string_view key);

// Whether [begin, end) holds data keys of one partition at most (the
// ranges the read cache keeps; a table's or a token range's are larger).
bool IsPartitionRange(const std::string& begin, const std::string& end);

// The first key after every key that starts with `prefix`.
std::string PrefixEnd(const std::string& prefix);

// The puts that store `partition` (a mutation) for the given table and key.
void AddMutation(const std::string& table, const std::string& partition_key,
                 const Partition& partition, WriteBatch& batch);

struct Decoded {
  // Reconciled and compacted (no versions a tombstone shadows). Incomplete
  // when corrupt_keys is not empty: then it must not be served.
  Partition partition;
  // Stored versions that lost the merge (older versions of a cell, cells
  // and row tombstones a tombstone shadows, older row tombstones, older
  // tombstones of the same range): deleting them changes
  // nothing a read can see, and keeps scans short (our compaction).
  std::vector<std::string> obsolete_keys;
  // Stored entries whose bytes fail their checksum or that this codec did
  // not write: a flipped bit, a torn or a misdirected write.
  std::vector<std::string> corrupt_keys;
  // The stored key of each row's tombstone (by clustering key) and each
  // cell's winning version (by clustering key and column).
  std::map<std::string, std::string> row_tombstone_keys;
  std::map<std::pair<std::string, std::string>, std::string> cell_keys;
  std::map<ClusteringRange, std::string> range_tombstone_keys;
};

// Reconciles the stored versions read by scanning a partition or row
// prefix, setting aside the entries that do not check out.
Decoded DecodeScan(const std::vector<KeyValue>& stored);

// The stored keys a purge of the partition `decoded` deletes (docs/repair.md,
// "Tombstone GC"): its obsolete versions, and each deletion made before
// `purge_before` (range, row and cell tombstones by timestamp, expiring
// cells by expiry) with every version it shadows, so that the replica holds of
// them what one that never saw them holds. Deleted in one batch, a
// tombstone never goes without what it shadows. A range tombstone may
// shadow rows `decoded` does not hold (a compaction reads a large
// partition in batches): it goes only if its stored key is among
// `purgeable_range_tombstones` (nullptr: all of them, `decoded` is the
// whole partition). REQUIRES: no corrupt keys.
struct Purge {
  std::vector<std::string> keys;
  uint64_t deletions = 0;  // range, row and cell tombstones and expired cells among them
};
Purge PurgedKeys(const Decoded& decoded, Timestamp purge_before,
                 const std::set<std::string>* purgeable_range_tombstones = nullptr);

// Deletes stored versions no read needs: obsolete ones (they lose every
// merge, so the next scan of the partition is short) and corrupt ones
// (unreadable; repair writes what they held again). Unsynced: if a crash
// brings them back, they still lose, or fail their checksum again.
void DropKeys(Storage& storage, const std::vector<std::string>& keys);

}  // namespace storage_codec
}  // namespace charybdis
