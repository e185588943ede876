#include "core/topology/join_starter.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "core/env/probe.h"

namespace charybdis::topology {

JoinStarter::JoinStarter(ShardEnv env, const NodeConfig& config, const TopologyLog& log,
                         std::function<bool()> holds_peers_schema, std::function<bool(NodeId)> is_alive,
                         Submit submit)
    : env_(env),
      config_(config),
      log_(log),
      holds_peers_schema_(std::move(holds_peers_schema)),
      is_alive_(std::move(is_alive)),
      submit_(std::move(submit)) {
  CHARYBDIS_ASSERT(env_.self.shard == 0);
  CHARYBDIS_ASSERT(config_.new_node.has_value());
  CHARYBDIS_ASSERT(config_.ring->layout().Find(env_.self.node) == nullptr);  // not a bootstrap member
  CHARYBDIS_ASSERT(holds_peers_schema_ != nullptr && is_alive_ != nullptr && submit_ != nullptr);
  CHARYBDIS_ASSERT(config_.new_node->replaces != env_.self.node);
}

// The first check waits a round: the topology agent loads the log this
// node kept, which may hold it already (a restart).
void JoinStarter::Start() { CheckLater(kCheckInterval); }

void JoinStarter::CheckLater(Nanos delay) {
  env_.clock->After(delay, [this] { Check(); });
}

void JoinStarter::Check() {
  if (const Member* self = log_.topology().Find(env_.self.node)) {
    waiting_for_ = self->state == NodeState::kLeft
                       ? absl::StrCat("nothing: node ", env_.self.node,
                                      " has left the cluster (its join was rolled back), and its id is spent; "
                                      "start it again with an empty data directory and a new id")
                       : "";
    return;  // the operation driver goes on from here
  }
  if (asking_) return CheckLater(kCheckInterval);
  if (!holds_peers_schema_()) {
    CHARYBDIS_PROBE(env_.probes, "topology.join_waits_for_schema");
    waiting_for_ = "the schema log of its peers";
    return CheckLater(kCheckInterval);
  }
  // A replacement takes a dead node's place, never a live one's (as
  // Cassandra refuses to replace a node gossip holds up).
  if (const NodeId replaced = config_.new_node->replaces; replaced != 0 && is_alive_(replaced)) {
    CHARYBDIS_PROBE(env_.probes, "topology.replacement_waits_for_death");
    waiting_for_ = absl::StrCat("node ", replaced, " to be down: a replacement takes a dead node's place");
    return CheckLater(kCheckInterval);
  }
  Ask();
}

void JoinStarter::Ask() {
  CHARYBDIS_ASSERT(!asking_);
  asking_ = true;
  waiting_for_ = "the cluster to agree on its join";
  CHARYBDIS_PROBE(env_.probes, "topology.join_asked");
  submit_(Begin(), [this](ClientResponse answer) { OnAnswer(answer); });
}

void JoinStarter::OnAnswer(const ClientResponse& answer) {
  CHARYBDIS_ASSERT(asking_);
  asking_ = false;
  if (answer.code() == ClientResponse::OK) return Check();
  // Refused (an operation in progress, a token taken meanwhile) or not
  // decided: the next begin is drawn against the log as it is then.
  CHARYBDIS_PROBE(env_.probes, "topology.join_refused");
  waiting_for_ = absl::StrCat("the cluster, which refused the join: ", answer.message());
  CheckLater(kRetryDelay);
}

Entry JoinStarter::Begin() const {
  const NewNode& self = *config_.new_node;
  Entry entry;
  entry.kind = Entry::Kind::kBegin;
  entry.operation = self.replaces != 0 ? Operation::kReplace : Operation::kJoin;
  entry.node = env_.self.node;
  entry.replaced = self.replaces;
  entry.driver = env_.self.node;
  entry.joining = Member{.id = env_.self.node,
                         .address = self.address,
                         .datacenter = self.datacenter,
                         .rack = self.rack,
                         .tokens = {},
                         .state = self.replaces != 0 ? NodeState::kReplacing : NodeState::kJoining,
                         .client_address = self.client_address,
                         .cql_address = self.cql_address};
  if (self.replaces == 0) {
    // A replacement takes the dead node's tokens; a join draws its own.
    const ClusterLayout& layout = config_.ring->layout();
    std::set<Token> taken;
    for (const auto& [token, holder] : log_.topology().TokenHolders()) taken.insert(token);
    entry.joining.tokens = DrawTokensOfNewNode(layout.token_seed, env_.self.node, layout.vnodes_per_node, taken);
  }
  return entry;
}

}  // namespace charybdis::topology
