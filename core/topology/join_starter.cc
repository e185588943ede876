#include "core/topology/join_starter.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "core/env/probe.h"

namespace charybdis::topology {

JoinStarter::JoinStarter(ShardEnv env, const NodeConfig& config, const TopologyLog& log,
                         std::function<bool()> holds_peers_schema, Submit submit)
    : env_(env),
      config_(config),
      log_(log),
      holds_peers_schema_(std::move(holds_peers_schema)),
      submit_(std::move(submit)) {
  CHARYBDIS_ASSERT(env_.self.shard == 0);
  CHARYBDIS_ASSERT(config_.new_node.has_value());
  CHARYBDIS_ASSERT(config_.ring->layout().Find(env_.self.node) == nullptr);  // not a bootstrap member
  CHARYBDIS_ASSERT(holds_peers_schema_ != nullptr && submit_ != nullptr);
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
  Ask();
}

void JoinStarter::Ask() {
  CHARYBDIS_ASSERT(!asking_);
  asking_ = true;
  waiting_for_ = "the cluster to agree on its join";
  CHARYBDIS_PROBE(env_.probes, "topology.join_asked");
  submit_(BeginOfJoin(), [this](ClientResponse answer) { OnAnswer(answer); });
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

Entry JoinStarter::BeginOfJoin() const {
  const ClusterLayout& layout = config_.ring->layout();
  std::set<Token> taken;
  for (const auto& [token, holder] : log_.topology().TokenHolders()) taken.insert(token);
  Entry entry;
  entry.kind = Entry::Kind::kBegin;
  entry.operation = Operation::kJoin;
  entry.node = env_.self.node;
  entry.driver = env_.self.node;
  entry.joining = Member{.id = env_.self.node,
                         .address = config_.new_node->address,
                         .datacenter = config_.new_node->datacenter,
                         .rack = config_.new_node->rack,
                         .tokens = DrawTokensOfNewNode(layout.token_seed, env_.self.node, layout.vnodes_per_node, taken),
                         .state = NodeState::kJoining,
                         .client_address = config_.new_node->client_address,
                         .cql_address = config_.new_node->cql_address};
  return entry;
}

}  // namespace charybdis::topology
