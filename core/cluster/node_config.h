#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/cluster/failure_detector.h"
#include "core/cluster/token_ring.h"
#include "core/data/tombstone_gc.h"

namespace charybdis {

namespace cql {
class Schema;  // core/cql/schema.h: the cluster holds it, never reads it
}  // namespace cql

struct TableSchema {
  std::string name;
  std::set<std::string> columns;
  // When its deletions may be purged (docs/repair.md, "Tombstone GC").
  TombstoneGc gc;
};

struct CoordinatorOptions {
  // ScyllaDB's defaults.
  Nanos write_timeout = 2000 * kMillisecond;
  Nanos read_timeout = 5000 * kMillisecond;
  // Send one more read when the answers take longer than this percentile of
  // the shard's recent read latency (0 turns speculative retry off).
  double speculative_retry_percentile = 99;
  bool hinted_handoff = true;
  // Hints are stored only for replicas down for less than this.
  Nanos max_hint_window = 3 * 3600 * kSecond;
  // Hints in flight per target during replay (the rate limit).
  uint32_t hint_replay_parallelism = 8;
  // How often a shard looks for hints it can replay.
  Nanos hint_replay_interval = 1 * kSecond;
  // Conditional writes to one partition that reach one shard share Paxos
  // rounds (off: each runs its own, duelling, as in Cassandra and ScyllaDB).
  bool lwt_batching = true;
};

// A node that is not one of the bootstrap members (docs/topology.md,
// "Joining"): where it stands and how others reach it. It starts with no
// data, reads the topology and schema logs from its peers (the bootstrap
// members, its seeds) and asks to join.
struct NewNode {
  std::string datacenter;
  std::string rack;
  // Where peers, clients (gRPC) and drivers (CQL) reach it (real nodes;
  // empty in the simulator).
  std::string address;
  std::string client_address;
  std::string cql_address;
  // Not 0: it replaces this dead member, taking its tokens (its datacenter
  // and rack must be the dead member's); 0: it joins with tokens of its own.
  NodeId replaces = 0;
};

struct NodeConfig {
  NodeId id = 0;
  // The bootstrap members, itself excepted: whom it heartbeats from the
  // start. Members that join later are heartbeated once the topology log
  // holds them.
  std::vector<NodeId> peers;
  uint32_t shards = 1;
  FailureDetectorOptions failure_detector;
  // The ring (with the cluster layout), shared by every shard of every node.
  std::shared_ptr<const TokenRing> ring;
  // Each member's internode address, for the bootstrap topology (real
  // nodes; empty in the simulator, where ids are addresses).
  std::map<NodeId, std::string> member_addresses;
  // Set when this node is not one of the ring's (bootstrap) members: it joins.
  std::optional<NewNode> new_node;
  std::map<std::string, TableSchema> tables;
  // The CQL schema the cluster starts with (cql_schema); the schema log
  // changes it from there (core/schema/schema_agent.h). Null: none.
  std::shared_ptr<const cql::Schema> cql_bootstrap;
  CoordinatorOptions coordinator;
  // Per shard, for the ranges reads scan (core/read_cache/read_cache.h); 0: none.
  size_t read_cache_bytes = 32 << 20;
  // How often the node purges and compacts every table on its own, as
  // `ctl compact` does (docs/repair.md, "Tombstone GC").
  Nanos compaction_interval = 24 * 3600 * kSecond;
};

// This node's internode address: its bootstrap member's, or the new
// node's (empty in the simulator).
inline std::string AddressOfSelf(const NodeConfig& config) {
  if (config.new_node) return config.new_node->address;
  auto it = config.member_addresses.find(config.id);
  return it == config.member_addresses.end() ? std::string() : it->second;
}

// The datacenter this node stands in: its bootstrap member's, or the new
// node's.
inline const std::string& DatacenterOfSelf(const NodeConfig& config) {
  return config.new_node ? config.new_node->datacenter : config.ring->layout().node(config.id).datacenter;
}

}  // namespace charybdis
