#pragma once

// The cluster's membership, one version at a time (docs/topology.md). Each
// entry of the topology log moves it to the next version; applying an
// entry is a pure function of the topology before it, so every node that
// holds the same entries holds the same topology. One operation (join,
// decommission, removenode, replace) runs at a time, in fenced stages:
//
//   begin ──> write both, read old ──> write both, read new ──> finish
//                    │ (streaming)
//                    └──> roll back (only before reads move)
//
// A change of a keyspace's replication (ALTER KEYSPACE) is an operation
// too, of no node: the keyspace's tables are placed by its old and its new
// replication in both stages (placements.h).

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/cluster/cluster_layout.h"
#include "core/data/token.h"
#include "core/env/address.h"

namespace charybdis::topology {

enum class NodeState { kJoining, kNormal, kLeaving, kLeft, kReplacing };
const char* NodeStateName(NodeState state);

struct Member {
  NodeId id = 0;
  std::string address;
  std::string datacenter;
  std::string rack;
  std::vector<Token> tokens;
  NodeState state = NodeState::kNormal;
  // Where its clients (gRPC) and drivers (CQL) reach it, for a member that
  // joined (real nodes; the bootstrap members' are in every config).
  std::string client_address;
  std::string cql_address;
};

enum class Operation { kJoin, kDecommission, kRemove, kReplace, kReplicate };
const char* OperationName(Operation operation);

// The stages of an operation in progress. Writes go to the old and the
// new replicas in both; reads move to the new ones in the second.
enum class Stage { kWriteBothReadOld, kWriteBothReadNew };
const char* StageName(Stage stage);

// kReplicate: which keyspace (in which of its lives) goes from which
// replication to which.
struct ReplicationMove {
  std::string keyspace;
  uint64_t keyspace_created_at = 0;  // TableReplication's
  ReplicationConfig from;
  ReplicationConfig to;
  // The ALTER KEYSPACE that asked for it, which the driver appends to the
  // schema log once the data is in place and reads moved.
  std::string statement;
};

struct Move {
  Operation operation = Operation::kJoin;
  // The node that joins, leaves, is removed, or replaces; kReplicate: the
  // node that drives it.
  NodeId node = 0;
  NodeId replaced = 0;  // kReplace: the dead node whose tokens it takes
  Stage stage = Stage::kWriteBothReadOld;
  uint64_t since_version = 0;  // the version that began it
  // The node that streams and appends the later stages (operation_driver.h);
  // 0: none, an operator appends each stage by hand.
  NodeId driver = 0;
  ReplicationMove replicating;  // kReplicate
};

// One entry of the topology log.
struct Entry {
  enum class Kind {
    kBegin,     // starts `operation` on `node` (with `joining` for a join or a replace)
    kReadNew,   // the operation's reads move to the new replicas
    kFinish,    // the operation is done: the old owners stop taking writes
    kRollBack,  // the operation is undone (before its reads moved)
  };
  Kind kind = Kind::kBegin;
  Operation operation = Operation::kJoin;
  NodeId node = 0;
  NodeId replaced = 0;
  // kBegin of a join or a replace: the new node (its tokens empty for a
  // replace, which takes the replaced node's).
  Member joining;
  // kBegin: who drives the operation (Move::driver): the operation's own
  // node or a normal member; 0 for none.
  NodeId driver = 0;
  ReplicationMove replicating;  // kBegin of a kReplicate
};

// The replication a finished kReplicate gave a keyspace's life: it places
// that keyspace's tables whatever a node's schema says, since a node's
// schema log may be behind its topology log (placements.h).
struct ChangedReplication {
  uint64_t keyspace_created_at = 0;
  ReplicationConfig replication;
  uint64_t since_version = 0;  // of the operation's begin
};

class Topology {
 public:
  // The bootstrap topology: `members`, every one normal, at version 1.
  static Topology Bootstrap(std::vector<Member> members);

  // The topology after `entry`, or why the entry is refused (then nothing
  // changes, alike on every node).
  absl::StatusOr<Topology> Apply(const Entry& entry) const;

  uint64_t version() const { return version_; }
  const std::map<NodeId, Member>& members() const { return members_; }
  const Member* Find(NodeId id) const;
  const std::optional<Move>& move() const { return move_; }
  // By keyspace name: the last replication an operation gave each.
  const std::map<std::string, ChangedReplication>& changed_replications() const { return changed_replications_; }

  // The members that own tokens now: normal, leaving, and a node being
  // removed or replaced until the operation finishes.
  std::map<NodeId, std::vector<Token>> OwnersNow() const;
  // The owners once the operation in progress is done (OwnersNow without one).
  std::map<NodeId, std::vector<Token>> OwnersAfter() const;
  // Every token owned now or after, and its owner: what a new node's
  // tokens must avoid.
  std::map<Token, NodeId> TokenHolders() const;

 private:
  absl::Status CheckBegin(const Entry& entry) const;
  absl::Status CheckDriver(const Entry& entry) const;
  absl::Status CheckReplicate(const Entry& entry) const;
  Topology Begun(const Entry& entry) const;
  Topology Finished() const;
  Topology RolledBack() const;
  void CheckInvariants() const;

  uint64_t version_ = 0;
  std::map<NodeId, Member> members_;  // those that left too: an id is never used again
  std::optional<Move> move_;
  std::map<std::string, ChangedReplication> changed_replications_;
};

}  // namespace charybdis::topology
