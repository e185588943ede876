#include "core/cluster/liveness.h"

#include <algorithm>

namespace charybdis {

std::vector<NodeId> LivenessView::Update(const std::vector<NodeId>& up, Nanos now) {
  std::vector<NodeId> came_up;
  for (NodeId node : up) {
    auto [it, inserted] = nodes_.try_emplace(node);
    if (!it->second.up) came_up.push_back(node);
  }
  for (auto& [node, state] : nodes_) {
    const bool is_up = std::find(up.begin(), up.end(), node) != up.end();
    if (state.up && !is_up) state.down_since = now;
    state.up = is_up;
  }
  std::sort(came_up.begin(), came_up.end());
  came_up.erase(std::unique(came_up.begin(), came_up.end()), came_up.end());
  return came_up;
}

bool LivenessView::IsUp(NodeId node) const {
  auto it = nodes_.find(node);
  return it != nodes_.end() && it->second.up;
}

std::vector<NodeId> LivenessView::UpNodes() const {
  std::vector<NodeId> up;
  for (const auto& [node, state] : nodes_) {
    if (state.up) up.push_back(node);
  }
  return up;
}

Nanos LivenessView::DownFor(NodeId node, Nanos now) const {
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return now - created_;
  if (it->second.up) return 0;
  return now - it->second.down_since;
}

}  // namespace charybdis
