#include "core/topology/topology.h"

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"

namespace charybdis::topology {

const char* NodeStateName(NodeState state) {
  switch (state) {
    case NodeState::kJoining: return "joining";
    case NodeState::kNormal: return "normal";
    case NodeState::kLeaving: return "leaving";
    case NodeState::kLeft: return "left";
    case NodeState::kReplacing: break;
  }
  CHARYBDIS_ASSERT(state == NodeState::kReplacing);
  return "replacing";
}

const char* OperationName(Operation operation) {
  switch (operation) {
    case Operation::kJoin: return "join";
    case Operation::kDecommission: return "decommission";
    case Operation::kRemove: return "removenode";
    case Operation::kReplace: return "replace";
    case Operation::kReplicate: break;
  }
  CHARYBDIS_ASSERT(operation == Operation::kReplicate);
  return "replicate";
}

const char* StageName(Stage stage) {
  return stage == Stage::kWriteBothReadOld ? "write both, read old" : "write both, read new";
}

Topology Topology::Bootstrap(std::vector<Member> members) {
  Topology topology;
  topology.version_ = 1;
  for (Member& member : members) {
    CHARYBDIS_ASSERT(member.id >= 1);
    member.state = NodeState::kNormal;
    const NodeId id = member.id;
    CHARYBDIS_ASSERT(topology.members_.emplace(id, std::move(member)).second);  // ids are distinct
  }
  topology.CheckInvariants();
  return topology;
}

const Member* Topology::Find(NodeId id) const {
  auto it = members_.find(id);
  return it == members_.end() ? nullptr : &it->second;
}

absl::StatusOr<Topology> Topology::Apply(const Entry& entry) const {
  if (entry.kind == Entry::Kind::kBegin) {
    if (absl::Status refused = CheckBegin(entry); !refused.ok()) return refused;
    return Begun(entry);
  }
  if (!move_ || move_->node != entry.node) {
    return absl::FailedPreconditionError(absl::StrCat("no operation on node ", entry.node, " is in progress"));
  }
  switch (entry.kind) {
    case Entry::Kind::kReadNew: {
      if (move_->stage != Stage::kWriteBothReadOld) return absl::FailedPreconditionError("reads have moved already");
      Topology next = *this;
      next.version_++;
      next.move_->stage = Stage::kWriteBothReadNew;
      next.CheckInvariants();
      return next;
    }
    case Entry::Kind::kFinish:
      if (move_->stage != Stage::kWriteBothReadNew) {
        return absl::FailedPreconditionError("an operation finishes only once reads have moved to the new replicas");
      }
      return Finished();
    case Entry::Kind::kRollBack:
      if (move_->stage != Stage::kWriteBothReadOld) {
        // The new replicas have served reads: undoing would lose what
        // they alone took since. Such an operation only goes forward.
        return absl::FailedPreconditionError("reads have moved to the new replicas: the operation can only finish");
      }
      return RolledBack();
    case Entry::Kind::kBegin: break;
  }
  CHARYBDIS_ASSERT(false);  // kBegin returned above
  return absl::InternalError("unreachable");
}

absl::Status Topology::CheckBegin(const Entry& entry) const {
  if (move_) {
    const Member& busy = members_.at(move_->node);
    const std::string what = move_->operation == Operation::kReplicate
                                 ? absl::StrCat("the change of keyspace ", move_->replicating.keyspace,
                                                "'s replication, driven by node ", busy.id)
                                 : absl::StrCat(OperationName(move_->operation), " of node ", busy.id);
    return absl::FailedPreconditionError(absl::StrCat("a topology change is in progress: ", what, " (", busy.address,
                                                      "), ", StageName(move_->stage), ", since version ",
                                                      move_->since_version, "; one runs at a time"));
  }
  if (absl::Status driver = CheckDriver(entry); !driver.ok()) return driver;
  if (entry.operation == Operation::kReplicate) return CheckReplicate(entry);
  const bool takes_new_node = entry.operation == Operation::kJoin || entry.operation == Operation::kReplace;
  if (takes_new_node) {
    const Member& joining = entry.joining;
    if (joining.id != entry.node || joining.id == 0) return absl::InvalidArgumentError("the new node needs an id");
    if (const Member* known = Find(joining.id)) {
      if (known->state == NodeState::kLeft) {
        return absl::FailedPreconditionError(absl::StrCat("node ", joining.id, " has left the cluster; an id that left never comes back: start the node with a new id and empty data"));
      }
      return absl::AlreadyExistsError(absl::StrCat("node ", joining.id, " is a member already (", NodeStateName(known->state), ")"));
    }
    if (joining.datacenter.empty()) return absl::InvalidArgumentError("the new node needs a datacenter");
  }
  const NodeId subject = entry.operation == Operation::kReplace ? entry.replaced : entry.node;
  if (entry.operation == Operation::kJoin) {
    if (entry.joining.tokens.empty()) return absl::InvalidArgumentError("a joining node needs tokens");
    const std::map<Token, NodeId> holders = TokenHolders();
    for (Token wanted : entry.joining.tokens) {
      auto held = holders.find(wanted);
      if (held != holders.end()) return absl::AlreadyExistsError(absl::StrCat("token ", wanted, " is node ", held->second, "'s"));
    }
    return absl::OkStatus();
  }
  const Member* member = Find(subject);
  if (member == nullptr || member->state != NodeState::kNormal) {
    return absl::FailedPreconditionError(absl::StrCat("node ", subject, " is not a normal member of the cluster",
                                                      member == nullptr ? "" : absl::StrCat(" (", NodeStateName(member->state), ")")));
  }
  // On another rack, the replacement would reshuffle NetworkTopologyStrategy's
  // rack-aware choice, and a range could get two pending replicas.
  if (entry.operation == Operation::kReplace &&
      (entry.joining.datacenter != member->datacenter || entry.joining.rack != member->rack)) {
    return absl::InvalidArgumentError(absl::StrCat("a replacement takes the datacenter and rack of the node it replaces (",
                                                   member->datacenter, ", ", member->rack, ")"));
  }
  if (entry.operation != Operation::kReplace && OwnersNow().size() == 1) {
    return absl::FailedPreconditionError("the last node of the cluster cannot leave it");
  }
  return absl::OkStatus();
}

absl::Status Topology::CheckDriver(const Entry& entry) const {
  if (entry.driver == 0) return absl::OkStatus();
  // A node being removed is dead: it cannot drive its own removal.
  if (entry.driver == entry.node && entry.operation != Operation::kRemove) return absl::OkStatus();
  const Member* driver = Find(entry.driver);
  if (driver == nullptr || driver->state != NodeState::kNormal || entry.driver == entry.node) {
    return absl::InvalidArgumentError(
        absl::StrCat("node ", entry.driver, " cannot drive the ", OperationName(entry.operation), " of node ", entry.node,
                     ": a driver is the operation's own node or a normal member, never a node being removed"));
  }
  return absl::OkStatus();
}

absl::Status Topology::CheckReplicate(const Entry& entry) const {
  const ReplicationMove& replicating = entry.replicating;
  if (replicating.keyspace.empty()) return absl::InvalidArgumentError("a change of replication names its keyspace");
  if (replicating.from == replicating.to) return absl::InvalidArgumentError("the replication does not change");
  // It goes from what places the keyspace now: an earlier change of that
  // life of it counts, though a node's schema may not hold it yet.
  auto changed = changed_replications_.find(replicating.keyspace);
  if (changed != changed_replications_.end() && changed->second.keyspace_created_at == replicating.keyspace_created_at &&
      !(changed->second.replication == replicating.from)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the change of replication of keyspace ", replicating.keyspace,
                     " does not start from its replication now (an earlier change gave it another)"));
  }
  // Its node drives it: a normal member, which stays one throughout.
  const Member* driver = Find(entry.node);
  if (entry.driver != entry.node || driver == nullptr || driver->state != NodeState::kNormal) {
    return absl::InvalidArgumentError("a change of replication is driven by the normal member that asks for it");
  }
  return absl::OkStatus();
}

Topology Topology::Begun(const Entry& entry) const {
  Topology next = *this;
  next.version_++;
  next.move_ = Move{entry.operation, entry.node,    entry.replaced,     Stage::kWriteBothReadOld,
                    next.version_,   entry.driver,  entry.replicating};
  switch (entry.operation) {
    case Operation::kJoin:
      next.members_[entry.node] = entry.joining;
      next.members_[entry.node].state = NodeState::kJoining;
      break;
    case Operation::kReplace: {
      Member replacing = entry.joining;
      replacing.tokens = members_.at(entry.replaced).tokens;
      replacing.state = NodeState::kReplacing;
      next.members_[entry.node] = std::move(replacing);
      break;
    }
    case Operation::kDecommission:
    case Operation::kRemove:
      next.members_.at(entry.node).state = NodeState::kLeaving;
      break;
    case Operation::kReplicate: break;  // no node moves
  }
  next.CheckInvariants();
  return next;
}

Topology Topology::Finished() const {
  CHARYBDIS_ASSERT(move_.has_value());
  Topology next = *this;
  next.version_++;
  const auto leave = [&next](NodeId id) {
    Member& member = next.members_.at(id);
    member.state = NodeState::kLeft;
    member.tokens.clear();
  };
  switch (move_->operation) {
    case Operation::kJoin: next.members_.at(move_->node).state = NodeState::kNormal; break;
    case Operation::kDecommission:
    case Operation::kRemove: leave(move_->node); break;
    case Operation::kReplace:
      leave(move_->replaced);
      next.members_.at(move_->node).state = NodeState::kNormal;
      break;
    case Operation::kReplicate: {
      const ReplicationMove& replicating = move_->replicating;
      next.changed_replications_[replicating.keyspace] = {replicating.keyspace_created_at, replicating.to,
                                                           move_->since_version};
      break;
    }
  }
  next.move_.reset();
  next.CheckInvariants();
  return next;
}

Topology Topology::RolledBack() const {
  CHARYBDIS_ASSERT(move_.has_value());
  Topology next = *this;
  next.version_++;
  Member& member = next.members_.at(move_->node);
  if (move_->operation == Operation::kJoin || move_->operation == Operation::kReplace) {
    // The id is spent: a node that started to join may hold data of
    // this attempt, so it never comes back under it.
    member.state = NodeState::kLeft;
    member.tokens.clear();
  } else {
    member.state = NodeState::kNormal;
  }
  next.move_.reset();
  next.CheckInvariants();
  return next;
}

std::map<NodeId, std::vector<Token>> Topology::OwnersNow() const {
  std::map<NodeId, std::vector<Token>> owners;
  for (const auto& [id, member] : members_) {
    if (member.state == NodeState::kNormal || member.state == NodeState::kLeaving) owners[id] = member.tokens;
  }
  return owners;
}

std::map<NodeId, std::vector<Token>> Topology::OwnersAfter() const {
  std::map<NodeId, std::vector<Token>> owners = OwnersNow();
  if (!move_) return owners;
  switch (move_->operation) {
    case Operation::kJoin: owners[move_->node] = members_.at(move_->node).tokens; break;
    case Operation::kDecommission:
    case Operation::kRemove: owners.erase(move_->node); break;
    case Operation::kReplace:
      owners.erase(move_->replaced);
      owners[move_->node] = members_.at(move_->node).tokens;
      break;
    case Operation::kReplicate: break;  // the owners stay; the replication changes
  }
  return owners;
}

std::map<Token, NodeId> Topology::TokenHolders() const {
  std::map<Token, NodeId> holders;
  // A replacement's tokens are the replaced node's now and its own after:
  // the holder named is the one now.
  for (const auto& owners : {OwnersNow(), OwnersAfter()}) {
    for (const auto& [id, tokens] : owners) {
      for (Token token : tokens) holders.emplace(token, id);
    }
  }
  return holders;
}

void Topology::CheckInvariants() const {
  CHARYBDIS_ASSERT(version_ >= 1);
  size_t moving = 0;
  for (const auto& [id, member] : members_) {
    CHARYBDIS_ASSERT(member.id == id);
    CHARYBDIS_ASSERT(member.tokens.empty() == (member.state == NodeState::kLeft));
    if (member.state != NodeState::kNormal && member.state != NodeState::kLeft) moving++;
  }
  // One operation at a time, and a node in motion only under one.
  const bool moves_a_node = move_ && move_->operation != Operation::kReplicate;
  CHARYBDIS_ASSERT(moving == (moves_a_node ? 1u : 0u));
  if (move_) {
    CHARYBDIS_ASSERT(members_.count(move_->node) == 1);
    CHARYBDIS_ASSERT((move_->operation == Operation::kReplicate) == !move_->replicating.keyspace.empty());
    CHARYBDIS_ASSERT(move_->since_version <= version_);
    CHARYBDIS_ASSERT((move_->operation == Operation::kReplace) == (move_->replaced != 0));
  }
  // No token has two owners, now or after.
  for (const auto& owners : {OwnersNow(), OwnersAfter()}) {
    std::set<Token> seen;
    for (const auto& [id, tokens] : owners) {
      for (Token token : tokens) CHARYBDIS_ASSERT(seen.insert(token).second);
    }
  }
}

}  // namespace charybdis::topology
