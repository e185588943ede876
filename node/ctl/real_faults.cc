#include "node/ctl/real_faults.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "core/workload/fault_kinds.h"
#include "node/server/log.h"

namespace charybdis::node {

RealFaults::RealFaults(const scenario::Scenario& spec, LocalCluster& cluster, Random random)
    : cluster_(cluster) {
  for (const scenario::FaultAction& action : spec.faults().action()) AddScripted(action);
  if (spec.has_random_faults()) AddRandom(spec.random_faults(), random);
}

RealFaults::~RealFaults() {
  if (thread_.joinable()) thread_.join();
}

void RealFaults::Add(uint64_t at_ms, std::string what, std::function<void()> act) {
  counts_[what]++;
  events_.emplace(at_ms, Event{at_ms, std::move(what), std::move(act)});
}

void RealFaults::Crash(NodeId node, bool power_cut) {
  const absl::StatusOr<DroppedData> killed = cluster_.Kill(node, power_cut);
  if (!killed.ok()) return;
  crashed_.insert(node);
  applied_++;
  if (power_cut) {
    Log("info", "power cut",
        {{"node", absl::StrCat(node)}, {"bytes_dropped", absl::StrCat(killed->bytes_dropped)}});
  }
}

void RealFaults::Restart(NodeId node) {
  if (!crashed_.count(node)) return;
  if (cluster_.Start(node).ok()) crashed_.erase(node);
  applied_++;
}

void RealFaults::Partition(const std::vector<NodeId>& a, const std::vector<NodeId>& b) {
  for (NodeId x : a) {
    for (NodeId y : b) {
      if (x != y) (void)cluster_.Partition(x, y);
    }
  }
  applied_++;
}

void RealFaults::AddPause(uint64_t at_ms, NodeId node, uint64_t length_ms) {
  Add(at_ms, "pause", [this, node] {
    if (cluster_.Pause(node).ok()) applied_++;
  });
  Add(at_ms + length_ms, "resume", [this, node] { (void)cluster_.Resume(node); });
}

void RealFaults::AddScripted(const scenario::FaultAction& action) {
  const uint64_t at = action.at_ms();
  if (!FaultKindOf(action.kind_case()).on_real_nodes) {
    skipped_++;
    return;
  }
  switch (action.kind_case()) {
    case scenario::FaultAction::kCrash: {
      const NodeId node = action.crash().node();
      const bool power_cut = action.crash().power_cut();
      return Add(at, power_cut ? "power cut" : "crash", [this, node, power_cut] { Crash(node, power_cut); });
    }
    case scenario::FaultAction::kRestart: {
      const NodeId node = action.restart().node();
      return Add(at, "restart", [this, node] { Restart(node); });
    }
    case scenario::FaultAction::kPartition: {
      std::vector<NodeId> a(action.partition().side_a().begin(), action.partition().side_a().end());
      std::vector<NodeId> b(action.partition().side_b().begin(), action.partition().side_b().end());
      if (b.empty()) {
        for (NodeId node : cluster_.nodes()) {
          if (std::find(a.begin(), a.end(), node) == a.end()) b.push_back(node);
        }
      }
      return Add(at, "partition", [this, a, b] { Partition(a, b); });
    }
    case scenario::FaultAction::kHeal:
      return Add(at, "heal", [this] {
        (void)cluster_.Heal();
        applied_++;
      });
    case scenario::FaultAction::kPause:
      return AddPause(at, action.pause().node(), action.pause().duration_ms());
    default:
      CHARYBDIS_ASSERT(false && "a fault kind on real nodes without a counterpart here");
  }
}

void RealFaults::AddRandom(const scenario::RandomFaults& faults, Random& random) {
  const uint64_t start = faults.start_ms();
  const uint64_t end = std::max(faults.end_ms(), start);
  const double minutes = static_cast<double>(end - start) / 60000.0;
  const std::vector<NodeId> nodes = cluster_.nodes();
  // Each run draws its rates in [0, max], as a simulation seed does.
  auto count = [&](double max_per_minute) {
    return static_cast<uint64_t>(random.Unit() * max_per_minute * minutes + 0.5);
  };
  auto duration = [&](uint64_t max_ms) { return 200 + random.Below(std::max<uint64_t>(max_ms, 201) - 199); };
  // One node down at a time: crashes and pauses take turns in slots.
  struct Outage {
    uint64_t at, until;
  };
  std::vector<Outage> outages;
  auto free_slot = [&](uint64_t at, uint64_t until) {
    for (const Outage& outage : outages) {
      if (at < outage.until + 1000 && outage.at < until + 1000) return false;
    }
    return true;
  };
  const uint32_t max_down = std::max<uint32_t>(faults.max_nodes_down(), 1);
  auto place = [&](uint64_t length) -> std::optional<uint64_t> {
    for (int attempt = 0; attempt < 20; attempt++) {
      const uint64_t at = start + random.Below(std::max<uint64_t>(end - start, 1));
      if (max_down > 1 || free_slot(at, at + length)) {
        outages.push_back({at, at + length});
        return at;
      }
    }
    return std::nullopt;
  };
  // As in a simulation seed: a share of the crashes, drawn per run, are
  // power cuts.
  const double power_cut_fraction = random.Unit() * faults.max_power_cut_fraction();
  for (uint64_t i = count(faults.max_crashes_per_minute()); i > 0; i--) {
    const uint64_t downtime = duration(faults.max_downtime_ms());
    const NodeId node = nodes[random.Below(nodes.size())];
    const bool power_cut = random.Chance(power_cut_fraction);
    if (auto at = place(downtime)) {
      Add(*at, power_cut ? "power cut" : "crash", [this, node, power_cut] { Crash(node, power_cut); });
      Add(*at + downtime, "restart", [this, node] { Restart(node); });
    }
  }
  for (uint64_t i = count(faults.max_pauses_per_minute()); i > 0; i--) {
    const uint64_t length = duration(faults.max_pause_ms());
    const NodeId node = nodes[random.Below(nodes.size())];
    if (auto at = place(length)) AddPause(*at, node, length);
  }
  // A node cut off is as good as down: partitions take turns with the
  // other outages.
  for (uint64_t i = count(faults.max_partitions_per_minute()); i > 0; i--) {
    const uint64_t length = duration(faults.max_partition_ms());
    const NodeId node = nodes[random.Below(nodes.size())];
    std::vector<NodeId> rest;
    for (NodeId other : nodes) {
      if (other != node) rest.push_back(other);
    }
    if (auto at = place(length)) {
      Add(*at, "partition", [this, node, rest] { Partition({node}, rest); });
      Add(*at + length, "heal", [this] { (void)cluster_.Heal(); });
    }
  }
  for (const FaultKind& kind : FaultKinds()) {
    if (kind.random_rate != nullptr && !kind.on_real_nodes) skipped_ += count(kind.random_rate(faults));
  }
}

void RealFaults::Start() {
  thread_ = std::thread([this] { Run(); });
}

void RealFaults::Run() {
  const auto start = std::chrono::steady_clock::now();
  for (auto& [at_ms, event] : events_) {
    std::this_thread::sleep_until(start + std::chrono::milliseconds(at_ms));
    Log("info", "fault", {{"what", event.what}, {"at_ms", absl::StrCat(at_ms)}});
    event.act();
  }
}

void RealFaults::FinishAndHeal() {
  if (thread_.joinable()) thread_.join();
  (void)cluster_.Heal();
  for (NodeId node : cluster_.nodes()) (void)cluster_.Resume(node);
  for (NodeId node : std::set<NodeId>(crashed_)) Restart(node);
}

std::string RealFaults::Summary() const {
  std::string text;
  for (const auto& [what, count] : counts_) absl::StrAppend(&text, text.empty() ? "" : ", ", what, " ", count);
  absl::StrAppend(&text, text.empty() ? "" : "; ", skipped_, " without a real counterpart skipped");
  return text;
}

}  // namespace charybdis::node
