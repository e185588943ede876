#pragma once

// The tables drivers read to learn the cluster and its schema, served
// from what the node knows (Cassandra 3's layout, which drivers expect
// of a server whose release_version is 3.x, as ScyllaDB reports):
// system.local, system.peers, system.peers_v2 and system_schema.*.

#include <string>
#include <vector>

#include "core/cql/result.h"
#include "core/cql/schema.h"

namespace charybdis::cql {

struct HostInfo {
  std::string host_id;  // 16 bytes
  std::string datacenter;
  std::string rack;
  std::vector<std::string> tokens;  // decimal
  std::string address;              // native: 4 or 16 bytes
  int32_t native_port = 9042;
  bool up = true;
  // Peers: the schema version their last heartbeat gave (16 bytes; empty
  // until heard). Drivers wait for every live node to agree after DDL.
  std::string schema_version;
};

struct ClusterView {
  std::string cluster_name = "charybdis";
  HostInfo local;
  std::vector<HostInfo> peers;
};

// The tables above, as a schema of their own (keyspaces system and
// system_schema).
const Schema& SystemSchema();
bool IsSystemKeyspace(std::string_view keyspace);

// Every row of one of those tables, values in the table's column order.
std::vector<ResultRow> SystemRows(const Table& table, const Schema& user_schema, const ClusterView& cluster);

}  // namespace charybdis::cql
