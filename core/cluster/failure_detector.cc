#include "core/cluster/failure_detector.h"

#include <algorithm>
#include <charconv>
#include <string>

#include "core/env/assert.h"
#include "core/env/buggify_actions.h"
#include "core/data/checked_value.h"

namespace charybdis {

FailureDetector::FailureDetector(ShardEnv env, std::vector<NodeId> peers,
                                 FailureDetectorOptions options, OnChange on_change, Stamp stamp)
    : env_(env), options_(options), on_change_(std::move(on_change)), stamp_(std::move(stamp)) {
  CHARYBDIS_ASSERT(options.heartbeat_interval > 0);
  CHARYBDIS_ASSERT(options.convict_after > options.heartbeat_interval);
  for (NodeId peer : peers) {
    CHARYBDIS_ASSERT(peer != env.self.node);
    peers_[peer] = Peer{};
  }
}

namespace {

bool ParseGeneration(const std::string& stored, uint64_t& generation) {
  const std::optional<std::string_view> text = checked_value::Open(FailureDetector::kGenerationKey, stored);
  if (!text) return false;
  auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), generation);
  CHARYBDIS_ASSERT(error == std::errc());  // the checksum vouches for what we wrote
  CHARYBDIS_ASSERT(end == text->data() + text->size());
  return true;
}

}  // namespace

void FailureDetector::Start() { BumpGeneration(); }

void FailureDetector::BumpGeneration() {
  env_.storage->Get(kGenerationKey, [this](auto stored) {
    OnGenerationRead(std::move(stored));
  });
}

void FailureDetector::OnGenerationRead(
    absl::StatusOr<std::optional<std::string>> stored) {
  if (!stored.ok()) {
    // The disk failed: a node that cannot learn its generation must not
    // heartbeat, or peers could confuse its lives. Try again later.
    env_.clock->After(options_.heartbeat_interval, [this] { BumpGeneration(); });
    return;
  }
  uint64_t previous = 0;
  if (stored->has_value() && !ParseGeneration(**stored, previous)) {
    // Data loss: the last life's number is gone. Restarts never count up
    // to 2^62, so a life above it is newer than every counted one; a later
    // loss rides the clock in seconds above that (as Cassandra numbers
    // generations), which only a clock stepped far back could undo.
    CHARYBDIS_PROBE(env_.probes, "storage.corrupt_generation");
    const Nanos now = std::max<Nanos>(env_.clock->Now(), 0);
    previous = (uint64_t{1} << 62) + static_cast<uint64_t>(now / kSecond);
  }
  const uint64_t next = previous + 1;
  WriteBatch batch;
  batch.Put(kGenerationKey, checked_value::Seal(kGenerationKey, std::to_string(next)));
  env_.storage->Apply(std::move(batch), Durability::kSynced,
                      [this, next](absl::Status status) {
                        if (!status.ok()) {
                          env_.clock->After(options_.heartbeat_interval,
                                            [this] { BumpGeneration(); });
                          return;
                        }
                        CHARYBDIS_ASSERT(next > generation_);
                        generation_ = next;
                        Tick();
                      });
}

void FailureDetector::Tick() {
  ticks_++;
  SendHeartbeats();
  ConvictSilentPeers();
  NotifyIfChanged();
  env_.clock->After(options_.heartbeat_interval, [this] { Tick(); });
}

void FailureDetector::SendHeartbeats() {
  // A skipped round drives peers closer to conviction. Never two in a row:
  // a buggified run must still be able to converge.
  if (!skipped_last_round_ && env_.buggify->Fires("failure_detector.skip_heartbeat_round")) {
    skipped_last_round_ = true;
    return;
  }
  skipped_last_round_ = false;
  sequence_++;
  for (const auto& [node, peer] : peers_) SendHeartbeat(node);
}

void FailureDetector::SendHeartbeat(NodeId to) {
  Envelope message;
  Heartbeat* heartbeat = message.mutable_heartbeat();
  heartbeat->set_generation(generation_);
  heartbeat->set_sequence(sequence_);
  stamp_(*heartbeat);
  SendPerhapsTwice(env_, "failure_detector.heartbeat_duplicate", Address{to, 0}, std::move(message));
}

void FailureDetector::AddPeer(NodeId node) {
  CHARYBDIS_ASSERT(node != env_.self.node);
  // Up from its first heartbeat, as any peer; unheard from now on.
  peers_.try_emplace(node, Peer{0, ticks_, ticks_, false});
}

void FailureDetector::ConvictSilentPeers() {
  // Silence is measured in our own ticks, not on the clock: a clock that
  // steps forward must not convict everyone at once, nor one that steps
  // back keep the dead alive.
  for (auto& [node, peer] : peers_) {
    const Nanos silent = static_cast<Nanos>(ticks_ - peer.last_heard_tick) * options_.heartbeat_interval;
    if (peer.up && silent > options_.convict_after) {
      CHARYBDIS_PROBE(env_.probes, "failure_detector.convicted");
      peer.up = false;
    }
  }
}

void FailureDetector::OnHeartbeat(NodeId from, const Heartbeat& heartbeat) {
  CHARYBDIS_ASSERT(from != env_.self.node);
  auto it = peers_.find(from);
  if (it == peers_.end()) {
    // Not before our generation is durable: a heartbeat of generation 0
    // would tell nothing true.
    if (generation_ == 0) return;
    CHARYBDIS_PROBE(env_.probes, "failure_detector.answered_stranger");
    return SendHeartbeat(from);
  }
  Peer& peer = it->second;
  // Late or duplicated messages from an earlier life say nothing about now.
  if (heartbeat.generation() < peer.generation) return;
  peer.generation = heartbeat.generation();
  peer.last_heard_tick = ticks_;
  if (!peer.up) {
    CHARYBDIS_PROBE(env_.probes, "failure_detector.recovered");
    peer.up = true;
    NotifyIfChanged();
  }
}

void FailureDetector::NotifyIfChanged() {
  std::vector<NodeId> live = LiveNodes();
  if (live == last_reported_) return;
  last_reported_ = std::move(live);
  if (on_change_) on_change_(last_reported_);
}

bool FailureDetector::IsUp(NodeId node) const {
  if (node == env_.self.node) return generation_ > 0;
  auto it = peers_.find(node);
  return it != peers_.end() && it->second.up;
}

bool FailureDetector::HeldDown(NodeId node) const {
  if (node == env_.self.node) return false;
  auto it = peers_.find(node);
  if (it == peers_.end()) return false;  // not watched yet: nothing tells
  const Peer& peer = it->second;
  if (peer.up) return false;
  if (peer.generation != 0) return true;  // heard, then convicted
  CHARYBDIS_ASSERT(ticks_ >= peer.watched_since_tick);
  return static_cast<Nanos>(ticks_ - peer.watched_since_tick) * options_.heartbeat_interval > options_.convict_after;
}

std::vector<NodeId> FailureDetector::LiveNodes() const {
  std::vector<NodeId> live;
  bool self_listed = generation_ == 0;
  for (const auto& [node, peer] : peers_) {
    if (!self_listed && env_.self.node < node) {
      live.push_back(env_.self.node);
      self_listed = true;
    }
    if (peer.up) live.push_back(node);
  }
  if (!self_listed) live.push_back(env_.self.node);
  return live;
}

}  // namespace charybdis
