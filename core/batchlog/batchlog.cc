#include "core/batchlog/batchlog.h"

#include <memory>

#include "core/data/checked_value.h"
#include "core/data/storage_codec.h"
#include "core/env/assert.h"

namespace charybdis {

namespace {

constexpr char kBatchlogTag = 'b';
// Entries read per tick: a backlog drains over several ticks.
constexpr size_t kEntriesPerTick = 64;

std::string EntryKey(const std::string& batch_id) { return Batchlog::EntryPrefix() + batch_id; }

}  // namespace

std::string Batchlog::EntryPrefix() { return std::string(1, kBatchlogTag); }

Batchlog::Batchlog(ShardEnv env, const NodeConfig& config, ShardMetrics& metrics, RunMutation run_mutation)
    : env_(env), config_(config), metrics_(metrics), run_mutation_(std::move(run_mutation)) {}

void Batchlog::Start() {
  env_.clock->After(config_.coordinator.hint_replay_interval, [this] { Tick(); });
}

void Batchlog::OnStore(const Envelope& message) {
  const BatchlogStore& store = message.batchlog_store();
  const std::string key = EntryKey(store.batch_id());
  CHARYBDIS_ASSERT(key.size() == store.batch_id().size() + 1);
  BatchlogEntry entry = store.entry();
  entry.set_stored_at_us(env_.clock->Now() / kMicrosecond);
  WriteBatch batch;
  batch.Put(key, checked_value::Seal(key, entry.SerializeAsString()));
  const Address sender{message.from_node(), message.from_shard()};
  // Synced before the ack: the coordinator writes the batch only once its
  // log survives this node's crash.
  env_.storage->Apply(std::move(batch), Durability::kSynced, [this, sender, id = store.request_id()](absl::Status status) {
    Envelope ack;
    ack.mutable_replica_write_ack()->set_request_id(id);
    ack.mutable_replica_write_ack()->set_ok(status.ok());
    env_.network->Send(sender, std::move(ack));
  });
}

void Batchlog::OnRemove(const Envelope& message) {
  WriteBatch batch;
  batch.Delete(EntryKey(message.batchlog_remove().batch_id()));
  // Unsynced: an entry a crash brings back is replayed, which changes nothing.
  env_.storage->Apply(std::move(batch), Durability::kUnsynced, [](absl::Status) {});
}

void Batchlog::Tick() {
  if (!scanning_) {
    scanning_ = true;
    const std::string all = EntryPrefix();
    const std::string from = next_key_.empty() ? all : next_key_;
    env_.storage->Scan(from, storage_codec::PrefixEnd(all), kEntriesPerTick,
                       [this](absl::StatusOr<std::vector<KeyValue>> entries) {
                         CHARYBDIS_ASSERT(scanning_);  // one scan at a time
                         scanning_ = false;
                         if (!entries.ok()) return;  // a failed disk: the next tick tries again
                         CHARYBDIS_ASSERT(entries->size() <= kEntriesPerTick);  // Storage::Scan's limit
                         // Each tick goes on after the last: entries not due
                         // yet cannot keep later ones from their turn.
                         next_key_ = entries->size() < kEntriesPerTick ? "" : entries->back().key + std::string(1, '\0');
                         ReplayDue(*entries);
                       });
  }
  env_.clock->After(config_.coordinator.hint_replay_interval, [this] { Tick(); });
}

void Batchlog::ReplayDue(const std::vector<KeyValue>& entries) {
  const int64_t now_us = env_.clock->Now() / kMicrosecond;
  const int64_t due_after_us = 2 * config_.coordinator.write_timeout / kMicrosecond;
  for (const KeyValue& stored : entries) {
    BatchlogEntry entry;
    const std::optional<std::string_view> bytes = checked_value::Open(stored.key, stored.value);
    if (!bytes || !entry.ParseFromString(std::string(*bytes)) || entry.mutation_size() == 0) {
      // A torn or flipped entry cannot be replayed; its coordinator or the
      // other batch log node may still finish the batch.
      WriteBatch batch;
      batch.Delete(stored.key);
      env_.storage->Apply(std::move(batch), Durability::kUnsynced, [](absl::Status) {});
      continue;
    }
    if (replaying_.count(stored.key)) continue;
    // Early is safe: a batch's mutations carry their timestamps, and a
    // logged batch is applied in the end whatever its coordinator does.
    if (now_us - entry.stored_at_us() < due_after_us && !env_.buggify->Fires("batchlog.replay_early")) continue;
    Replay(stored.key, entry);
  }
}

void Batchlog::Replay(const std::string& key, const BatchlogEntry& entry) {
  // ReplayDue drops entries without mutations and skips those replaying.
  CHARYBDIS_ASSERT(entry.mutation_size() > 0);
  CHARYBDIS_ASSERT(replaying_.count(key) == 0);
  metrics_.batchlog_replays++;
  CHARYBDIS_PROBE(env_.probes, "batchlog.replayed");
  replaying_.insert(key);
  struct Progress {
    size_t unwritten = 0;
    bool all_ok = true;
  };
  auto progress = std::make_shared<Progress>();
  progress->unwritten = entry.mutation_size();
  for (const PartitionData& mutation : entry.mutation()) {
    // At ONE: every live replica gets it, and a down one a hint (if hinted
    // handoff is on), as for any write; one replica down must not hold
    // back the others.
    run_mutation_(mutation, entry.timestamp(), CL_ONE, [this, key, progress](ClientResponse response) {
      // A mutation of a table dropped since is dropped with it (Cassandra).
      const bool done = response.code() == ClientResponse::OK || response.code() == ClientResponse::INVALID_REQUEST;
      progress->all_ok = progress->all_ok && done;
      CHARYBDIS_ASSERT(progress->unwritten > 0);  // one reply per mutation
      if (--progress->unwritten > 0) return;
      CHARYBDIS_ASSERT(replaying_.count(key) == 1);
      replaying_.erase(key);
      if (!progress->all_ok) return;  // the next tick tries again
      WriteBatch batch;
      batch.Delete(key);
      env_.storage->Apply(std::move(batch), Durability::kUnsynced, [](absl::Status) {});
    });
  }
}

}  // namespace charybdis
