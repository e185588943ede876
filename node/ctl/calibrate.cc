#include "node/ctl/calibrate.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "core/env/assert.h"

namespace charybdis::node {

namespace {

// "sent KIND to N/S" or "received KIND from N/S": the kind and the peer.
bool ParseHop(const std::string& what, const std::string& verb, const std::string& preposition,
              std::string& kind, uint32_t& node, uint32_t& shard) {
  std::vector<std::string> words = absl::StrSplit(what, ' ');
  if (words.size() != 4 || words[0] != verb || words[2] != preposition) return false;
  kind = words[1];
  std::vector<std::string> address = absl::StrSplit(words[3], '/');
  return address.size() == 2 && absl::SimpleAtoi(address[0], &node) && absl::SimpleAtoi(address[1], &shard);
}

// The steps of one (node, shard), in time order.
using Place = std::pair<uint32_t, uint32_t>;

}  // namespace

void CollectHops(const ClientResponse& traced, HopSamples& samples) {
  std::vector<TraceEvent> steps(traced.trace().begin(), traced.trace().end());
  std::stable_sort(steps.begin(), steps.end(),
                   [](const TraceEvent& a, const TraceEvent& b) { return a.at_us() < b.at_us(); });
  // Receptions not yet matched with their send: (at node/shard, kind, from node/shard).
  std::vector<bool> used(steps.size(), false);
  std::map<Place, int64_t> sync_issued, read_received;
  for (size_t i = 0; i < steps.size(); i++) {
    const TraceEvent& step = steps[i];
    const Place here{step.node(), step.shard()};
    std::string kind;
    uint32_t node = 0, shard = 0;
    if (ParseHop(step.what(), "sent", "to", kind, node, shard)) {
      // The first later reception of this kind from here, at the target.
      for (size_t j = i + 1; j < steps.size(); j++) {
        std::string got;
        uint32_t from_node = 0, from_shard = 0;
        if (used[j] || steps[j].node() != node || steps[j].shard() != shard) continue;
        if (!ParseHop(steps[j].what(), "received", "from", got, from_node, from_shard)) continue;
        if (got != kind || from_node != step.node() || from_shard != step.shard()) continue;
        used[j] = true;
        (node == step.node() ? samples.within_node : samples.between_nodes).push_back(steps[j].at_us() - step.at_us());
        break;
      }
    } else if (ParseHop(step.what(), "received", "from", kind, node, shard) && kind == "replica_read") {
      read_received[here] = step.at_us();
    } else if (step.what() == "scan done" && read_received.count(here)) {
      samples.read.push_back(step.at_us() - read_received[here]);
      read_received.erase(here);
    } else if (step.what() == "synced write issued") {
      sync_issued[here] = step.at_us();
    } else if (step.what() == "write durable" && sync_issued.count(here)) {
      samples.sync.push_back(step.at_us() - sync_issued[here]);
      sync_issued.erase(here);
    }
  }
}

void CollectClientCost(const ClientResponse& traced, int64_t round_trip_us, HopSamples& samples) {
  if (traced.trace_size() == 0) return;
  const auto [first, last] = std::minmax_element(
      traced.trace().begin(), traced.trace().end(),
      [](const TraceEvent& a, const TraceEvent& b) { return a.at_us() < b.at_us(); });
  samples.client.push_back(round_trip_us - (last->at_us() - first->at_us()));
}

int64_t FirstStepUs(const ClientResponse& traced) {
  CHARYBDIS_ASSERT(traced.trace_size() > 0);
  return std::min_element(traced.trace().begin(), traced.trace().end(),
                          [](const TraceEvent& a, const TraceEvent& b) { return a.at_us() < b.at_us(); })
      ->at_us();
}

void CollectBurst(std::vector<int64_t> arrivals_us, HopSamples& samples) {
  const size_t cores = std::max<uint32_t>(samples.client_cores, 1);
  const size_t shares_apart = (arrivals_us.size() + cores - 1) / cores - 1;
  if (arrivals_us.empty() || shares_apart == 0) return;
  const auto [first, last] = std::minmax_element(arrivals_us.begin(), arrivals_us.end());
  samples.send_spacing_us.push_back((*last - *first) / static_cast<int64_t>(shares_apart));
}

scenario::Latency FitLatency(std::vector<int64_t> samples_us) {
  scenario::Latency latency;
  if (samples_us.empty()) return latency;
  std::sort(samples_us.begin(), samples_us.end());
  const int64_t floor_us = std::max<int64_t>(samples_us[samples_us.size() / 20], 0);
  const int64_t median_us = samples_us[samples_us.size() / 2];
  // The simulator draws min + an exponential jitter, whose median is its
  // mean times ln 2: the mean that puts the median where it was measured
  // (the scenarios compare medians). The measured tail is longer.
  const double jitter_mean = static_cast<double>(median_us - floor_us) / std::log(2.0);
  latency.set_min_us(static_cast<uint64_t>(floor_us));
  latency.set_jitter_mean_us(static_cast<uint64_t>(jitter_mean));
  return latency;
}

scenario::Scenario ProfileOf(const HopSamples& samples) {
  scenario::Scenario profile;
  *profile.mutable_network()->mutable_intra_dc() = FitLatency(samples.between_nodes);
  *profile.mutable_network()->mutable_intra_node() = FitLatency(samples.within_node);
  *profile.mutable_storage()->mutable_read() = FitLatency(samples.read);
  // The trace sees a synced write whole: the simulated disk's write part
  // is left at a token 1 us, and the rest is its sync.
  profile.mutable_storage()->mutable_write()->set_min_us(1);
  *profile.mutable_storage()->mutable_sync() = FitLatency(samples.sync);
  if (!samples.client.empty()) {
    std::vector<int64_t> hops = samples.between_nodes;
    std::sort(hops.begin(), hops.end());
    const int64_t hop_us = hops.empty() ? 0 : hops[hops.size() / 2];
    std::vector<int64_t> beyond_hops_us;
    for (int64_t client_us : samples.client) beyond_hops_us.push_back(std::max<int64_t>(client_us - 2 * hop_us, 0));
    *profile.mutable_client_machine()->mutable_request() = FitLatency(std::move(beyond_hops_us));
    profile.mutable_client_machine()->set_cores(samples.client_cores);
    if (!samples.send_spacing_us.empty()) {
      std::vector<int64_t> spacing_us = samples.send_spacing_us;
      std::nth_element(spacing_us.begin(), spacing_us.begin() + spacing_us.size() / 2, spacing_us.end());
      profile.mutable_client_machine()->set_core_us(static_cast<uint64_t>(spacing_us[spacing_us.size() / 2]));
    }
  }
  return profile;
}

}  // namespace charybdis::node
