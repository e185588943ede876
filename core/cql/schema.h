#pragma once

// The typed schema CQL sees: keyspaces, tables and their columns, and how
// a table's keys and values map onto our storage (docs/cql.md):
// - the partition key is Cassandra's serialized form (one column's value,
//   or the composite of several), so that its token is Cassandra's;
// - a clustering key is its columns' comparable forms, each escaped and
//   terminated (bytes reversed for DESC), so byte order is CQL order;
// - cell values are comparable forms, so conditions compare as CQL does;
// - an INSERT writes the row marker, a cell with no column name, so that
//   a row with only its key exists, as in Cassandra.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/data/tombstone_gc.h"
#include "core/cql/statement.h"
#include "core/cql/types.h"

namespace charybdis::cql {

// The storage column of the row marker (no CQL column has an empty name).
inline const std::string kRowMarker;

struct Column {
  enum class Kind { kPartitionKey, kClustering, kRegular };
  std::string name;
  Type type;
  Kind kind = Kind::kRegular;
  int position = 0;  // among the columns of its kind
  bool descending = false;
  // The storage column of a regular column's cells: its name, or
  // "name@N" when entry N of the schema log added it again after a drop,
  // so that the cells of its earlier life stay unread.
  std::string storage;
};

struct Table {
  std::string keyspace;
  std::string name;
  // The storage table: "keyspace.table" for the bootstrap schema,
  // "keyspace.table@N" for a table created by entry N of the schema log,
  // so that a table dropped and created again starts empty.
  std::string storage;
  std::string id;  // 16 bytes: a UUID derived from `storage`
  // Partition key columns, then clustering columns, each in key order,
  // then regular columns by name (the order of SELECT *, as in Cassandra).
  std::vector<Column> columns;
  int partition_key_count = 0;
  int clustering_count = 0;
  // Regular columns dropped by ALTER TABLE. Their stored cells stay, and
  // a column added again under the name gets a storage column of its own.
  std::set<std::string> dropped;
  // When its deletions may be purged (docs/repair.md, "Tombstone GC").
  TombstoneGc gc;

  const Column* Find(std::string_view column) const;
  int IndexOf(std::string_view column) const;
  // The storage columns of the regular columns, and the row marker: a
  // stored row with no live cell among them does not exist in CQL.
  std::vector<std::string> StorageColumns() const;
};

struct Keyspace {
  std::string name;
  // system_schema.keyspaces' replication: "class" and its options.
  std::map<std::string, std::string> replication;
  // The schema log entry that created it (0: the bootstrap schema), which
  // tells its lives apart (TableReplication).
  uint64_t created_at = 0;
};

class Schema {
 public:
  // Its replication as given: core/schema/replication.h checks it first.
  // `sequence`: the schema log entry that creates it (0: the bootstrap).
  absl::Status Apply(const CreateKeyspace& create, uint64_t sequence = 0);
  // Its replication as given (checked first, as CREATE's). Applied once its
  // data moved (docs/topology.md, "Changing a keyspace's replication").
  absl::Status Apply(const AlterKeyspace& alter);
  // `sequence`: the schema log entry that creates the table (0: the
  // bootstrap). Keys of unordered types (collections) are for the system
  // tables only, which are served, never stored.
  absl::Status Apply(const CreateTable& create, uint64_t sequence = 0, bool allow_unordered_keys = false);
  absl::Status Apply(const DropKeyspace& drop);
  absl::Status Apply(const DropTable& drop);
  // `sequence`: the schema log entry that alters, naming the storage of
  // a dropped column added again (0, the bootstrap schema, may not).
  absl::Status Apply(const AlterTable& alter, uint64_t sequence);
  // A keyspace of the system tables, whatever its strategy.
  absl::Status ApplySystem(const CreateKeyspace& create);

  const Keyspace* FindKeyspace(std::string_view name) const;
  const Table* FindTable(std::string_view keyspace, std::string_view table) const;
  const std::map<std::string, Keyspace>& keyspaces() const { return keyspaces_; }
  const std::map<std::pair<std::string, std::string>, Table>& tables() const { return tables_; }
  // A UUID that every node holding the same schema computes alike.
  std::string Version() const;

 private:
  std::map<std::string, Keyspace> keyspaces_;
  std::map<std::pair<std::string, std::string>, Table> tables_;
};

// Whether a SELECT scans the table in ring order: it restricts no
// partition key column (only token(), if anything).
bool IsScan(const Table& table, const Select& select);
// Whether a DELETE deletes a range of rows (a partition, a clustering
// prefix or a slice of one) rather than one row: it does not give every
// clustering column once, with =.
bool IsRangeDelete(const Table& table, const Delete& del);

// Keys. Values are native; a clustering prefix (fewer values) is allowed.
std::string EncodePartitionKey(const Table& table, const std::vector<std::string>& values);
// REQUIRES: a key of this table.
std::vector<std::string> DecodePartitionKey(const Table& table, std::string_view key);
std::string EncodeClustering(const Table& table, const std::vector<std::string>& values);
std::vector<std::string> DecodeClustering(const Table& table, std::string_view key);
// The smallest key above every key that starts with `prefix` (empty: none).
std::string PrefixEnd(std::string prefix);

// A UUID in its text form, and 16 bytes from a name (for ids).
std::string UuidText(std::string_view bytes);
std::string NameUuid(std::string_view name);

}  // namespace charybdis::cql
