#include "sim/view_check.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace charybdis::sim {

CheckResult CheckViewsConverge(const Cluster& cluster) {
  std::vector<NodeId> running;
  for (NodeId id = 1; id <= cluster.size(); id++) {
    if (cluster.node(id).running()) running.push_back(id);
  }
  CheckResult result{"views_converge", true, ""};
  for (NodeId id : running) {
    const std::vector<NodeId> view = cluster.node(id).failure_detector()->LiveNodes();
    if (view != running) {
      result.passed = false;
      absl::StrAppend(&result.detail, result.detail.empty() ? "" : "; ", "node ", id, " sees [",
                      absl::StrJoin(view, ","), "] up");
    }
    // Every shard routes requests by its own copy of the view.
    for (ShardId shard = 0; shard < cluster.topology().shards_per_node; shard++) {
      const std::vector<NodeId> copy = cluster.node(id).LiveNodesSeenBy(shard);
      if (copy != view) {
        result.passed = false;
        absl::StrAppend(&result.detail, result.detail.empty() ? "" : "; ", "shard ", id, ".", shard,
                        " sees [", absl::StrJoin(copy, ","), "] up");
      }
    }
  }
  if (!result.passed) {
    absl::StrAppend(&result.detail, "; running: [", absl::StrJoin(running, ","), "]");
  } else {
    result.detail = absl::StrCat(running.size(), " running nodes agree on [",
                                 absl::StrJoin(running, ","), "]");
  }
  return result;
}

}  // namespace charybdis::sim
