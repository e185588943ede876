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

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
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

enum class Operation { kJoin, kDecommission, kRemove, kReplace };
const char* OperationName(Operation operation);

// The stages of an operation in progress. Writes go to the old and the
// new replicas in both; reads move to the new ones in the second.
enum class Stage { kWriteBothReadOld, kWriteBothReadNew };
const char* StageName(Stage stage);

struct Move {
  Operation operation = Operation::kJoin;
  NodeId node = 0;      // the node that joins, leaves, is removed, or replaces
  NodeId replaced = 0;  // kReplace: the dead node whose tokens it takes
  Stage stage = Stage::kWriteBothReadOld;
  uint64_t since_version = 0;  // the version that began it
  // The node that streams and appends the later stages (operation_driver.h);
  // 0: none, an operator appends each stage by hand.
  NodeId driver = 0;
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
  Topology Begun(const Entry& entry) const;
  Topology Finished() const;
  Topology RolledBack() const;
  void CheckInvariants() const;

  uint64_t version_ = 0;
  std::map<NodeId, Member> members_;  // those that left too: an id is never used again
  std::optional<Move> move_;
};

}  // namespace charybdis::topology
