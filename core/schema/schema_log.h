#pragma once

// A node's CQL schema: the bootstrap schema (cql_schema), then the
// entries of the schema log in their order. Every node that holds the
// same entries holds the same schema and version, since applying an entry
// is a pure function of the schema before it. Pure: core/schema/schema_agent.h
// reads and appends the log through Paxos.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/schema/replication.h"
#include "core/cql/schema.h"
#include "core/cluster/token_ring.h"

namespace charybdis::cql {

// The storage table of the log: partition kSchemaLogPartition, one row per
// entry (clustering key: its sequence number, 8 bytes big-endian).
inline const std::string kSchemaLogTable = "system.schema_log";
inline const std::string kSchemaLogPartition = "log";
inline const std::string kSchemaLogKeyspaceColumn = "keyspace";
inline const std::string kSchemaLogStatementColumn = "statement";

struct SchemaLogEntry {
  std::string keyspace;  // the connection's (USE), for names without one
  std::string statement;
};

std::string SchemaLogKey(uint64_t sequence);
// 0 when `key` is not one of SchemaLogKey's.
uint64_t SchemaLogSequence(std::string_view key);

class SchemaLog {
 public:
  // `cluster_ring`: the ring of the cluster's own replication, for
  // tables outside CQL keyspaces; its layout's datacenters are those
  // CREATE KEYSPACE checks replication factors against.
  SchemaLog(std::shared_ptr<const Schema> bootstrap, std::shared_ptr<const TokenRing> cluster_ring);

  // Whether `entry` would apply after every entry so far: true when it
  // changes the schema, false when it changes nothing (IF NOT EXISTS on
  // what exists, IF EXISTS on what does not), or the refusal. A keyspace's
  // replication must fit `datacenters` (CheckFits: the topology's owners
  // now, when a change is proposed), or the cluster ring's.
  absl::StatusOr<bool> Check(const SchemaLogEntry& entry, const Datacenters& datacenters) const;
  absl::StatusOr<bool> Check(const SchemaLogEntry& entry) const { return Check(entry, datacenters_); }
  // Applies entry sequence() + 1. An entry that Check refuses (two nodes
  // raced) is kept and changes nothing, alike on every node.
  void Append(SchemaLogEntry entry);

  uint64_t sequence() const { return entries_.size(); }
  const std::vector<SchemaLogEntry>& entries() const { return entries_; }
  const std::shared_ptr<const Schema>& schema() const { return schema_; }
  const std::string& version() const { return version_; }
  // The storage tables of the CQL tables, and the log's own: name ->
  // columns (with the row marker), for the coordinators' checks.
  const std::map<std::string, std::set<std::string>>& storage_tables() const { return storage_tables_; }
  // The storage tables of every table the log dropped (DROP TABLE, DROP
  // KEYSPACE): no entry uses their names again, so their keys may go
  // (core/repair/dropped_tables.h).
  const std::set<std::string>& dropped_storage_tables() const { return dropped_storage_tables_; }
  // How a storage table is replicated: as its keyspace for a CQL table,
  // as the cluster for any other (the config's tables, the schema log).
  // Who the replicas are is the topology's (core/topology/placements.h),
  // which also knows of a change of the keyspace's replication this log
  // may not hold yet.
  const TableReplication& ReplicationOf(const std::string& storage_table) const;
  // What `entry` asks of a keyspace's replication, when it is an ALTER
  // KEYSPACE that changes it: such a change is a topology operation
  // (docs/topology.md), which appends the entry once the data is in
  // place. REQUIRES: Check(entry) is ok.
  struct ReplicationChange {
    TableReplication now;  // the keyspace's, as this log says
    ReplicationConfig to;
  };
  std::optional<ReplicationChange> ReplicationChangeOf(const SchemaLogEntry& entry) const;
  // Every replication in use, by whose it is: "the cluster" (the config's
  // tables and the logs) and "keyspace NAME" for each replicated keyspace.
  // A topology change must leave enough owners for each.
  std::map<std::string, TableReplication> Replications() const;
  // The storage tables the token ring places, each with its replication:
  // the CQL tables of replicated keyspaces and the schema log's own (not
  // those of LocalStrategy keyspaces, which every node keeps for itself).
  std::map<std::string, TableReplication> TablesPlacedByToken() const;

 private:
  // `fits`: as ApplySchemaStatement's.
  absl::Status ApplyTo(const SchemaLogEntry& entry, uint64_t sequence, const Datacenters* fits, Schema& schema) const;
  void SetSchema(std::shared_ptr<const Schema> schema);
  Datacenters datacenters_;
  TableReplication cluster_replication_;  // keyspace empty
  std::map<std::string, TableReplication> table_replications_;  // CQL storage table -> its keyspace's
  std::vector<SchemaLogEntry> entries_;
  std::shared_ptr<const Schema> schema_;
  std::string version_;
  std::map<std::string, std::set<std::string>> storage_tables_;
  std::set<std::string> dropped_storage_tables_;
};

}  // namespace charybdis::cql
