#include "core/hints/hint_manager.h"

#include "core/env/assert.h"
#include "core/env/buggify_actions.h"
#include "core/data/big_endian.h"
#include "core/data/checked_value.h"
#include "core/data/storage_codec.h"
#include "core/data/token.h"

namespace charybdis {

namespace {

constexpr char kHintTag = 'h';

std::string TargetPrefix(NodeId target) {
  std::string prefix(1, kHintTag);
  AppendBigEndian(prefix, target, 4);
  return prefix;
}

constexpr size_t kHintKeySize = 1 + 4 + 8;

}  // namespace

std::string HintManager::KeyPrefix() { return std::string(1, kHintTag); }

HintManager::HintManager(ShardEnv env, const NodeConfig& config, LivenessView& liveness, ShardMetrics& metrics,
                         std::function<bool(NodeId)> has_left)
    : env_(env),
      config_(config),
      liveness_(liveness),
      metrics_(metrics),
      has_left_(std::move(has_left)),
      // A nonce per life, as for the coordinator's ids; the top bit set.
      request_id_base_((uint64_t{1} << 63) | ((env.random->Next() >> 33) << 32)) {}

void HintManager::Start() {
  const std::string all = KeyPrefix();
  env_.storage->Scan(all, storage_codec::PrefixEnd(all), SIZE_MAX, [this](auto hints) {
    if (!hints.ok()) {
      // The disk failed: try again later; until then new hints could reuse
      // sequence numbers, so none are stored.
      env_.clock->After(config_.coordinator.hint_replay_interval, [this] { Start(); });
      return;
    }
    for (const KeyValue& hint : *hints) {
      CHARYBDIS_ASSERT(hint.key.size() == kHintKeySize);
      targets_.insert(static_cast<NodeId>(ReadBigEndian(std::string_view(hint.key).substr(1), 4)));
      next_sequence_ = std::max(next_sequence_, ReadBigEndian(std::string_view(hint.key).substr(5), 8) + 1);
    }
    started_ = true;
    Tick();
  });
}

void HintManager::Tick() {
  // A busy shard may miss a tick: replays only come later.
  if (!env_.buggify->Fires("hints.skip_replay_tick")) {
    std::vector<NodeId> left;
    for (NodeId target : targets_) {
      if (has_left_(target)) {
        left.push_back(target);
      } else if (liveness_.IsUp(target)) {
        ReplayTo(target);
      }
    }
    for (NodeId target : left) Excise(target);
  }
  env_.clock->After(config_.coordinator.hint_replay_interval, [this] { Tick(); });
}

void HintManager::Store(NodeId target, const PartitionData& mutation,
                        std::function<void(bool)> done) {
  const Nanos down_for = liveness_.DownFor(target, env_.clock->Now());
  if (!started_ || down_for >= config_.coordinator.max_hint_window || has_left_(target)) {
    if (started_ && has_left_(target)) {
      CHARYBDIS_PROBE(env_.probes, "hints.dropped_for_left_node");
    } else if (started_) {
      CHARYBDIS_PROBE(env_.probes, "hints.expired_window");
    }
    metrics_.hints_dropped++;
    done(false);
    return;
  }
  std::string key = TargetPrefix(target);
  AppendBigEndian(key, next_sequence_++, 8);
  WriteBatch batch;
  std::string sealed = checked_value::Seal(key, mutation.SerializeAsString());
  batch.Put(std::move(key), std::move(sealed));
  env_.storage->Apply(std::move(batch), Durability::kSynced,
                      [this, target, done = std::move(done)](absl::Status status) {
                        if (!status.ok()) {
                          metrics_.hints_dropped++;
                          done(false);
                          return;
                        }
                        metrics_.hints_written++;
                        targets_.insert(target);
                        stored_for_[target]++;
                        done(true);
                      });
}

void HintManager::Excise(NodeId target) {
  // As Cassandra excises a removed endpoint's hints: the node never comes
  // back under its id, and its ranges were streamed to their new owners.
  if (!excising_.insert(target).second) return;  // already under way
  const std::string prefix = TargetPrefix(target);
  const uint64_t stored_before = stored_for_[target];
  env_.storage->Scan(prefix, storage_codec::PrefixEnd(prefix), SIZE_MAX, [this, target, stored_before](auto hints) {
    if (!hints.ok()) {
      excising_.erase(target);  // the next tick tries again
      return;
    }
    WriteBatch batch;
    for (const KeyValue& hint : *hints) batch.Delete(hint.key);
    const uint64_t count = hints->size();
    env_.storage->Apply(std::move(batch), Durability::kSynced, [this, target, stored_before, count](absl::Status status) {
      excising_.erase(target);
      if (!status.ok()) return;
      metrics_.hints_dropped += count;
      CHARYBDIS_PROBE(env_.probes, "hints.dropped_for_left_node");
      // Unless a hint stored before the node left arrived meanwhile.
      if (stored_for_[target] == stored_before) targets_.erase(target);
    });
  });
}

void HintManager::OnTargetUp(NodeId target) {
  if (started_ && targets_.count(target)) ReplayTo(target);
}

void HintManager::ReplayTo(NodeId target) {
  Replay& replay = replays_[target];
  const uint32_t parallelism = config_.coordinator.hint_replay_parallelism;
  if (replay.scanning || replay.in_flight.size() >= parallelism) return;
  replay.scanning = true;
  const std::string prefix = TargetPrefix(target);
  const uint64_t stored_before = stored_for_[target];
  // Enough to fill the window even if every hint in flight is listed again.
  env_.storage->Scan(prefix, storage_codec::PrefixEnd(prefix), 2 * parallelism,
                     [this, target, stored_before](auto hints) {
                       OnScanned(target, stored_before, std::move(hints));
                     });
}

void HintManager::OnScanned(NodeId target, uint64_t stored_before,
                            absl::StatusOr<std::vector<KeyValue>> hints) {
  Replay& replay = replays_[target];
  replay.scanning = false;
  if (!hints.ok()) return;  // the next tick tries again
  if (hints->empty() && replay.in_flight.empty()) {
    // Everything delivered, unless a hint was stored while we looked.
    if (stored_for_[target] == stored_before) targets_.erase(target);
    return;
  }
  if (!liveness_.IsUp(target)) return;
  for (const KeyValue& hint : *hints) {
    if (replay.in_flight.size() >= config_.coordinator.hint_replay_parallelism) break;
    if (!replay.sent.count(hint.key)) Send(target, hint);
  }
}

void HintManager::Send(NodeId target, const KeyValue& hint) {
  Envelope message;
  ReplicaWrite* write = message.mutable_replica_write();
  const std::optional<std::string_view> payload = checked_value::Open(hint.key, hint.value);
  if (!payload || !write->mutable_mutation()->ParseFromArray(payload->data(),
                                                             static_cast<int>(payload->size()))) {
    // Data loss: a hint that fails its checksum cannot be replayed. Drop
    // it; read repair is what is left for that write.
    CHARYBDIS_PROBE(env_.probes, "storage.corrupt_hint");
    metrics_.hints_dropped++;
    WriteBatch batch;
    batch.Delete(hint.key);
    env_.storage->Apply(std::move(batch), Durability::kSynced, [](absl::Status) {});
    return;
  }
  const uint64_t request_id = request_id_base_ | ++last_request_id_;
  write->set_request_id(request_id);
  write->set_replay(true);
  const Token token = TokenOf(write->mutation().partition_key());
  Replay& replay = replays_[target];
  replay.in_flight[request_id] = hint.key;
  replay.sent.insert(hint.key);
  // Replays are idempotent (original timestamps): twice changes nothing.
  SendPerhapsTwice(env_, "hints.replay_twice", Address{target, ShardOf(token, config_.shards)},
                   std::move(message));
  env_.clock->After(PerhapsShorter(env_, "hints.short_replay_timeout", config_.coordinator.write_timeout),
                    [this, target, request_id] { OnReplayTimeout(target, request_id); });
}

void HintManager::OnReplayTimeout(NodeId target, uint64_t request_id) {
  Replay& replay = replays_[target];
  auto it = replay.in_flight.find(request_id);
  if (it == replay.in_flight.end()) return;  // acknowledged in time
  CHARYBDIS_PROBE(env_.probes, "hints.replay_timed_out");
  replay.sent.erase(it->second);
  replay.in_flight.erase(it);
}

void HintManager::OnAck(NodeId from, uint64_t request_id, bool ok) {
  CHARYBDIS_ASSERT(IsHintRequest(request_id));
  for (auto& [target, replay] : replays_) {
    auto it = replay.in_flight.find(request_id);
    if (it == replay.in_flight.end() || target != from) continue;
    const std::string key = it->second;
    replay.in_flight.erase(it);
    if (!ok) {
      CHARYBDIS_PROBE(env_.probes, "hints.replay_refused_by_disk");
      replay.sent.erase(key);  // the target's disk failed: resend later
      return;
    }
    metrics_.hints_sent++;
    CHARYBDIS_PROBE(env_.probes, "hints.replayed");
    WriteBatch batch;
    batch.Delete(key);
    // Unsynced: if the delete is lost in a crash the hint is sent again,
    // which is harmless.
    env_.storage->Apply(std::move(batch), Durability::kUnsynced,
                        [this, target = target, key](absl::Status) {
                          replays_[target].sent.erase(key);
                          if (liveness_.IsUp(target)) ReplayTo(target);
                        });
    return;
  }
  // A duplicate or late ack of a hint already delivered: nothing to do.
}

}  // namespace charybdis
