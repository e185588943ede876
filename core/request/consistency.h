#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/cluster/cluster_layout.h"
#include "core/cluster/token_ring.h"
#include "proto/client.pb.h"

namespace charybdis {

const char* ConsistencyName(ConsistencyLevel level);

// Why a consistency level cannot serve an operation (InvalidArgument), or OK.
absl::Status ValidForWrite(ConsistencyLevel level);
absl::Status ValidForRead(ConsistencyLevel level);
bool IsSerial(ConsistencyLevel level);
// An unset serial level is SERIAL (Cassandra's default), everywhere.
ConsistencyLevel SerialOrDefault(ConsistencyLevel level);
// The serial level of a conditional write.
inline ConsistencyLevel SerialLevelOf(const CasOp& op) { return SerialOrDefault(op.serial_consistency()); }

// Too few live replicas: refused before anything was sent.
ClientResponse Unavailable(ConsistencyLevel level, uint32_t alive, uint32_t blocked_for, const char* why);
// The topology cannot place the replication at all (fewer owners in a
// datacenter than its factor): Unavailable, no replica alive, saying why.
ClientResponse Unplaceable(ConsistencyLevel level, const absl::Status& why);

// How many replica answers a consistency level blocks for, and which
// answers count (Cassandra's db/ConsistencyLevel.java):
//   ANY 1 (a stored hint counts); ONE, TWO, THREE; QUORUM = RF/2+1 of all;
//   ALL; LOCAL_ONE and LOCAL_QUORUM = RF_local/2+1 count only replicas in
//   the coordinator's datacenter; EACH_QUORUM needs a quorum in every
//   datacenter with replicas.
// Under SimpleStrategy there are no per-datacenter factors: LOCAL_* count
// every replica (as if the cluster were one datacenter).
class Requirement {
 public:
  // `ring`: the ring of the replicas asked (shared: a request keeps the
  // ring it started with, also once the topology moved on).
  Requirement(ConsistencyLevel level, std::shared_ptr<const TokenRing> ring, const std::string& local_datacenter);

  // Cassandra's block_for + pending: during a topology change a write also
  // waits for each pending replica its level counts (of `after`, the ring
  // once the change is done), so that it is on enough owners of the ring
  // before and of the ring after (docs/topology.md). ANY stays at one.
  void AddPending(const std::vector<NodeId>& pending, std::shared_ptr<const TokenRing> after);
  // A change of replication that drops more of a range's owners than it
  // adds (a factor lowered): block_for + pending no longer keeps a write on
  // enough of the owners after (a QUORUM of 5 may hold none of a QUORUM of
  // the 3 that stay), so the answers must also satisfy the level among
  // `after_replicas`, of `after` (docs/topology.md).
  void AlsoAmong(std::shared_ptr<const TokenRing> after, std::vector<NodeId> after_replicas);

  ConsistencyLevel level() const { return level_; }
  uint32_t blocked_for() const { return blocked_for_; }
  // Whether an answer from this replica counts towards the level.
  bool Counts(NodeId replica) const;
  // Whether these answers (distinct replicas) satisfy the level.
  bool SatisfiedBy(const std::vector<NodeId>& answered) const;
  // How many of these count.
  uint32_t Counted(const std::vector<NodeId>& answered) const;
  // The level among the owners after (AlsoAmong), if it was asked, and the
  // answers of those owners.
  const Requirement* among_after() const { return among_after_.get(); }
  std::vector<NodeId> AnsweredAfter(const std::vector<NodeId>& answered) const;

 private:
  const std::string& DatacenterOf(NodeId replica) const;

  ConsistencyLevel level_;
  std::shared_ptr<const TokenRing> ring_;
  std::shared_ptr<const TokenRing> after_;  // set by AddPending
  std::string local_datacenter_;
  bool local_only_ = false;
  uint32_t blocked_for_ = 0;
  std::map<std::string, uint32_t> per_datacenter_;  // EACH_QUORUM only
  std::shared_ptr<const Requirement> among_after_;  // set by AlsoAmong
  std::vector<NodeId> after_replicas_;
};

}  // namespace charybdis
