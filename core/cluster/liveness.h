#pragma once

#include <map>
#include <vector>

#include "core/env/address.h"
#include "core/env/time.h"

namespace charybdis {

// One shard's copy of its node's view of who is up (the failure detector
// runs on shard 0 and sends every change to the other shards).
class LivenessView {
 public:
  // Nodes not seen up yet count as down since `created`.
  explicit LivenessView(Nanos created) : created_(created) {}

  // Replaces the view; returns the nodes that came up with this update.
  std::vector<NodeId> Update(const std::vector<NodeId>& up, Nanos now);

  bool IsUp(NodeId node) const;
  std::vector<NodeId> UpNodes() const;
  // How long `node` has been down, as of `now` (0 if up).
  Nanos DownFor(NodeId node, Nanos now) const;

 private:
  struct State {
    bool up = false;
    Nanos down_since = 0;
  };
  Nanos created_;
  std::map<NodeId, State> nodes_;
};

}  // namespace charybdis
