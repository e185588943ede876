#pragma once

#include <functional>
#include <string>

#include "core/cluster/node_config.h"
#include "core/env/shard_env.h"
#include "core/topology/topology_log.h"

namespace charybdis::topology {

// Asks the cluster to let a new node in (NodeConfig::new_node;
// docs/topology.md, "Joining"), on the new node's shard 0. Once it has
// heard its peers and holds their schema log (so that it streams every
// table), it submits the begin of its own join through the topology agent,
// naming itself the driver, with tokens drawn clear of every token in use,
// or of its replacement of a dead member (NewNode::replaces), whose tokens
// it takes, once its failure detector holds that member down; the
// operation driver takes over from there. After a refusal (another
// operation runs) or a failure it asks again; it stops once the log holds
// the node. A node the log holds as left (its join rolled back) never asks
// again: its id is spent.
class JoinStarter {
 public:
  using Submit = std::function<void(Entry entry, std::function<void(ClientResponse)> answer)>;
  // `holds_peers_schema`: SchemaAgent::HoldsPeersLog; `is_alive`: the
  // failure detector's view.
  JoinStarter(ShardEnv env, const NodeConfig& config, const TopologyLog& log,
              std::function<bool()> holds_peers_schema, std::function<bool(NodeId)> is_alive, Submit submit);
  JoinStarter(const JoinStarter&) = delete;
  JoinStarter& operator=(const JoinStarter&) = delete;

  void Start();
  // What the join waits for, as status shows it; empty once the log holds
  // the node.
  const std::string& waiting_for() const { return waiting_for_; }

  static constexpr Nanos kCheckInterval = 500 * kMillisecond;
  // After a refusal: long enough for an operation in progress to move on.
  static constexpr Nanos kRetryDelay = 5 * kSecond;

 private:
  void Check();
  void Ask();
  void OnAnswer(const ClientResponse& answer);
  // The begin of this node's join, or of its replacement of a dead member.
  Entry Begin() const;
  void CheckLater(Nanos delay);

  ShardEnv env_;
  const NodeConfig& config_;
  const TopologyLog& log_;
  std::function<bool()> holds_peers_schema_;
  std::function<bool(NodeId)> is_alive_;
  Submit submit_;
  bool asking_ = false;  // a begin awaits its answer
  std::string waiting_for_ = "the logs of its peers";
};

}  // namespace charybdis::topology
