#pragma once

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "core/cluster/token_ring.h"
#include "core/topology/topology.h"

namespace charybdis::topology {

// Who replicates a token under one version of the topology, for one
// replication: the ring of the owners now, and of the owners once the
// operation in progress is done (docs/topology.md). A token's pending
// replicas are those of the second ring that are not in the first.
// Writes go to both; reads to the first until the operation's reads move,
// then to the second.
// The replications a table's tokens are placed by, now and once the
// operation in progress is done: the same but while its keyspace's
// replication changes.
struct PlacedBy {
  ReplicationConfig now;
  ReplicationConfig after;
};
// For a table: during a change of its keyspace's replication, the change's
// old and new; after one, the new, whatever the node's schema says (its
// schema log may not hold the ALTER yet, and a write placed by the old
// replication would miss replicas the reads now go to); else its schema's.
PlacedBy PlacedByOf(const Topology& topology, const TableReplication& table);

class Placement {
 public:
  // REQUIRES: CheckPlaceable(topology, placed_by) is ok.
  Placement(const Topology& topology, const PlacedBy& placed_by, uint32_t shards_per_node);
  // One replication, now and after. REQUIRES: CheckPlaceable(topology, replication).
  Placement(const Topology& topology, const ReplicationConfig& replication, uint32_t shards_per_node)
      : Placement(topology, PlacedBy{replication, replication}, shards_per_node) {}

  struct Replicas {
    std::vector<NodeId> natural;  // the owners now, in ring-walk order
    // Owners after, not owners now. One operation at a time gives a token
    // one at most (topology_test: random joins, decommissions and removals
    // on random racks; a replacement keeps its node's rack, since on
    // another one NetworkTopologyStrategy's rack-aware choice could
    // reshuffle and give two). LWT refuses more than one, as Cassandra
    // and ScyllaDB do.
    std::vector<NodeId> pending;
    // Owners now, not owners after: the node that leaves or is replaced,
    // one displaced by a join, or those a lowered factor or a change of
    // strategy class drops.
    std::vector<NodeId> dropped;
    // Whether block_for + pending may leave a write on too few of the
    // owners after, so that it must meet its level among them too, and a
    // Paxos majority of the owners now may hold no majority of them (LWT
    // refused): more owners dropped than added (a lowered factor), or any
    // dropped by a change of strategy class, which may move an owner from
    // one datacenter to another and so lower a datacenter's count while
    // the total stays.
    bool also_among_after = false;
  };
  Replicas WriteReplicasOf(Token token) const;
  const std::vector<NodeId>& ReadReplicasOf(Token token) const;

  uint64_t version() const { return version_; }
  const ReplicationConfig& replication() const { return now_->layout().replication; }
  const ReplicationConfig& replication_after() const { return after_->layout().replication; }
  // Shared: a request keeps the rings it started with.
  const std::shared_ptr<const TokenRing>& now() const { return now_; }
  const std::shared_ptr<const TokenRing>& after() const { return after_; }
  // The ring reads go to: now's until the operation's reads move.
  const std::shared_ptr<const TokenRing>& reads() const { return reads_moved_ ? after_ : now_; }

 private:
  uint64_t version_ = 0;
  bool reads_moved_ = false;
  bool class_changes_ = false;  // placed by one strategy class now, another after
  std::shared_ptr<const TokenRing> now_;
  std::shared_ptr<const TokenRing> after_;  // the same ring when nothing moves
};

// The members a static ring describes (the bootstrap topology's, from a
// node config): each node of its layout with the tokens it holds in it,
// addresses empty.
std::vector<Member> MembersOfRing(const TokenRing& ring);

// How many of `owners` (OwnersNow, OwnersAfter) each datacenter has.
std::map<std::string, uint32_t> OwnersPerDatacenter(const Topology& topology,
                                                    const std::map<NodeId, std::vector<Token>>& owners);

// Whether both rings of the topology can hold the replication: enough
// owners in each of its datacenters. A decommission or removenode that
// would leave fewer is refused with this reason.
absl::Status CheckPlaceable(const Topology& topology, const PlacedBy& placed_by);
inline absl::Status CheckPlaceable(const Topology& topology, const ReplicationConfig& replication) {
  return CheckPlaceable(topology, PlacedBy{replication, replication});
}

}  // namespace charybdis::topology
