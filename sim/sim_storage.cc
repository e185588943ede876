#include "sim/sim_storage.h"

#include <algorithm>

#include "core/assert.h"
#include "sim/latency.h"

namespace charybdis::sim {

namespace {

// The key of the batch's last put, or "" when it only deletes.
std::string LastPut(const WriteBatch& batch) {
  for (auto it = batch.operations.rbegin(); it != batch.operations.rend(); ++it) {
    if (it->value.has_value()) return it->key;
  }
  return "";
}

}  // namespace

SimStorage::SimStorage(Simulator& simulator, uint32_t host, uint32_t shard,
                       Random random, scenario::StorageProfile profile)
    : simulator_(simulator),
      host_(host),
      shard_(shard),
      random_(random),
      profile_(std::move(profile)) {}

Nanos SimStorage::CompletionTime(const scenario::Latency& latency, Nanos extra) {
  const Nanos ready = simulator_.now() + DrawLatency(latency, random_) + extra +
                      faults_.extra_latency;
  last_completion_ = std::max(last_completion_, ready);
  return last_completion_;
}

void SimStorage::Complete(Nanos at, uint64_t detail, std::function<void()> fn) {
  simulator_.Schedule(at, EventTag{EventKind::kStorage, host_, shard_, detail},
                      /*bound=*/true, std::move(fn));
}

void SimStorage::ApplyBatch(const WriteBatch& batch, Undo* undo) {
  for (const WriteBatch::Operation& operation : batch.operations) {
    // One descent of the tree per key, reused for the insertion.
    auto it = contents_.lower_bound(operation.key);
    const bool exists = it != contents_.end() && it->first == operation.key;
    if (undo != nullptr) {
      undo->emplace_back(operation.key,
                         exists ? std::optional<std::string>(it->second) : std::nullopt);
    }
    if (operation.value.has_value()) {
      if (exists) {
        it->second = *operation.value;
      } else {
        contents_.emplace_hint(it, operation.key, *operation.value);
      }
    } else if (exists) {
      contents_.erase(it);
    }
  }
}

void SimStorage::Apply(WriteBatch batch, Durability durability, WriteDone done) {
  const bool synced = durability == Durability::kSynced;
  const Nanos extra = synced ? DrawLatency(profile_.sync(), random_) : 0;
  const Nanos at = CompletionTime(profile_.write(), extra);
  const uint64_t id = ++last_write_id_;
  issued_.push_back(IssuedWrite{id, std::move(batch), synced, faults_.fail_writes});
  Complete(at, synced ? 2 : 1, [this, id, done = std::move(done)] { FinishWrite(id, done); });
  if (synced) Observe(StorageMoment::kSyncIssued);
}

void SimStorage::FinishWrite(uint64_t write_id, WriteDone done) {
  CHARYBDIS_ASSERT(!issued_.empty());
  CHARYBDIS_ASSERT(issued_.front().id == write_id);  // writes finish in issue order
  IssuedWrite write = std::move(issued_.front());
  issued_.pop_front();
  if (write.fails) {
    stats_.failed++;
    done(absl::UnavailableError("simulated disk write failure"));
    return;
  }
  stats_.writes++;
  WriteBatch batch = std::move(write.batch);
  if (faults_.misdirect_write_probability > 0) Misdirect(batch);
  if (write.synced) {
    stats_.synced_writes++;
    unsynced_.clear();  // everything before it is durable now
    unsynced_last_puts_.clear();
    ApplyBatch(batch, nullptr);
    if (Observe(StorageMoment::kSyncDurable)) return;  // the node dies before it hears
  } else {
    unsynced_.emplace_back();
    unsynced_last_puts_.push_back(LastPut(batch));
    ApplyBatch(batch, &unsynced_.back());
  }
  done(absl::OkStatus());
}

void SimStorage::Get(std::string key, GetDone done) {
  const bool fail = faults_.fail_reads;
  Complete(CompletionTime(profile_.read(), 0), 3, [this, key = std::move(key), fail, done] {
    if (fail) {
      stats_.failed++;
      done(absl::UnavailableError("simulated disk read failure"));
      return;
    }
    stats_.reads++;
    auto it = contents_.find(key);
    if (it == contents_.end()) {
      done(std::optional<std::string>());
    } else {
      std::string value = it->second;
      PerhapsCorrupt(key, value);
      done(std::optional<std::string>(std::move(value)));
    }
  });
}

void SimStorage::Scan(std::string begin, std::string end, size_t limit, ScanDone done) {
  const bool fail = faults_.fail_reads;
  Complete(CompletionTime(profile_.read(), 0), 4,
           [this, begin = std::move(begin), end = std::move(end), limit, fail, done] {
             if (fail) {
               stats_.failed++;
               done(absl::UnavailableError("simulated disk read failure"));
               return;
             }
             stats_.reads++;
             std::vector<KeyValue> rows;
             for (auto it = contents_.lower_bound(begin);
                  it != contents_.end() && rows.size() < limit && (end.empty() || it->first < end);
                  ++it) {
               rows.push_back(KeyValue{it->first, it->second});
             }
             if (!rows.empty() && faults_.corrupt_read_probability > 0) {
               KeyValue& row = rows[random_.Below(rows.size())];
               PerhapsCorrupt(row.key, row.value);
             }
             done(std::move(rows));
           });
}

void SimStorage::RollBackUnsyncedAfter(size_t keep) {
  CHARYBDIS_ASSERT(keep <= unsynced_.size());
  while (unsynced_.size() > keep) {
    const Undo& undo = unsynced_.back();
    for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
      if (it->second.has_value()) {
        contents_[it->first] = *it->second;
      } else {
        contents_.erase(it->first);
      }
    }
    unsynced_.pop_back();
    unsynced_last_puts_.pop_back();
  }
}

void SimStorage::Misdirect(WriteBatch& batch) {
  std::vector<WriteBatch::Operation> landed;
  for (WriteBatch::Operation& operation : batch.operations) {
    if (!operation.value.has_value() || !random_.Chance(faults_.misdirect_write_probability)) {
      landed.push_back(std::move(operation));
      continue;
    }
    stats_.misdirected_puts++;
    auto neighbour = contents_.upper_bound(operation.key);
    if (neighbour == contents_.end()) continue;  // past the last key: it lands nowhere
    operation.key = neighbour->first;
    landed.push_back(std::move(operation));
  }
  batch.operations = std::move(landed);
}

void SimStorage::PerhapsCorrupt(const std::string& key, std::string& returned) {
  if (returned.empty() || !random_.Chance(faults_.corrupt_read_probability)) return;
  const uint64_t bit = random_.Below(8 * returned.size());
  returned[bit / 8] ^= static_cast<char>(1 << (bit % 8));
  contents_[key] = returned;  // for good: the sector is bad
  stats_.corrupted_reads++;
}

void SimStorage::Tear(const std::string& key) {
  auto it = contents_.find(key);
  if (key.empty() || it == contents_.end() || it->second.empty()) return;
  it->second.resize(random_.Below(it->second.size()));
  stats_.torn_writes++;
}

void SimStorage::Crash(CrashKind kind) {
  // What is not durable, in order: the unsynced batches applied, then the
  // writes issued and unfinished (failing ones never reach the disk). The
  // OS may have written back any prefix of it; a power cut keeps none.
  std::vector<const WriteBatch*> issued;
  for (const IssuedWrite& write : issued_) {
    if (!write.fails) issued.push_back(&write.batch);
  }
  const size_t not_durable = unsynced_.size() + issued.size();
  const size_t survivors = kind == CrashKind::kPowerCut ? 0 : random_.Below(not_durable + 1);
  stats_.batches_lost_in_crashes += not_durable - survivors;
  // The last write kept is the one the OS was writing back when it died.
  std::string last_kept;
  if (survivors <= unsynced_.size()) {
    RollBackUnsyncedAfter(survivors);
    if (survivors > 0) last_kept = unsynced_last_puts_.back();
  } else {
    const size_t kept = survivors - unsynced_.size();
    CHARYBDIS_ASSERT(kept <= issued.size());
    for (size_t i = 0; i < kept; i++) ApplyBatch(*issued[i], nullptr);
    stats_.issued_batches_kept_in_crashes += kept;
    last_kept = LastPut(*issued[kept - 1]);
  }
  if (faults_.torn_writes && survivors > 0) Tear(last_kept);
  unsynced_.clear();
  unsynced_last_puts_.clear();
  issued_.clear();
  last_completion_ = simulator_.now();
}

}  // namespace charybdis::sim
