#include "sim/sim_storage.h"

#include <algorithm>
#include <set>

#include "core/env/assert.h"
#include "core/env/commitlog_sync.h"
#include "sim/latency.h"
#include "sim/stored_kinds.h"

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
      profile_(std::move(profile)) {
  sync_period_ = static_cast<Nanos>(SyncPeriodMs(profile_.commitlog_sync())) * kMillisecond;
  if (sync_period_ > 0) {
    periodic_phase_ = static_cast<Nanos>(random_.Below(static_cast<uint64_t>(sync_period_)));
  }
}

Nanos SimStorage::CompletionTime(const scenario::Latency& latency) {
  const Nanos ready = simulator_.now() + DrawLatency(latency, random_) + faults_.extra_latency;
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
  const bool synced = durability == Durability::kSynced && sync_period_ == 0;
  if (synced) {  // the writes crash points are taken at
    std::set<std::string> kinds;
    for (const WriteBatch::Operation& operation : batch.operations) kinds.insert(StoredKindOf(operation.key));
    for (const std::string& kind : kinds) synced_writes_by_kind_[kind]++;
  }
  const uint64_t id = ++last_write_id_;
  issued_.push_back(
      IssuedWrite{id, std::move(batch), durability == Durability::kSynced, faults_.fail_writes});
  if (!synced && !group_running_ && log_queue_.empty()) {
    // Nothing with the log writer: written at once, durable with the next
    // sync (the next group's, or PERIODIC's tick).
    const Nanos at = CompletionTime(profile_.write());
    Complete(at, 1, [this, id, done = std::move(done)] { FinishWrite(id, done); });
    return;
  }
  log_queue_.push_back(LoggedWrite{id, synced, std::move(done)});
  if (!group_running_) StartGroup();
  if (synced) Observe(StorageMoment::kSyncIssued);
}

void SimStorage::StartGroup() {
  CHARYBDIS_ASSERT(!group_running_ && group_.empty() && !log_queue_.empty());
  group_.swap(log_queue_);
  bool synced = false;
  for (const LoggedWrite& write : group_) synced = synced || write.synced;
  // One write and, if any member asked for it, one fsync for the group.
  // Reads go on meanwhile (they run on the shard, not the log writer), so
  // the group does not hold up later reads' completions.
  const Nanos sync = synced ? DrawLatency(profile_.sync(), random_) : 0;
  const Nanos ready =
      simulator_.now() + DrawLatency(profile_.write(), random_) + sync + faults_.extra_latency;
  const Nanos at = std::max(last_completion_, ready);
  group_running_ = true;
  Complete(at, 2, [this] { FinishGroup(); });
}

void SimStorage::FinishGroup() {
  CHARYBDIS_ASSERT(group_running_ && !group_.empty());
  std::vector<LoggedWrite> group = std::move(group_);
  group_.clear();
  group_running_ = false;
  bool synced = false;
  for (const LoggedWrite& write : group) synced = synced || write.synced;
  std::vector<absl::Status> statuses;
  for (const LoggedWrite& write : group) statuses.push_back(Land(write.id, synced));
  if (synced) {
    stats_.syncs++;
    if (Observe(StorageMoment::kSyncDurable)) return;  // the node dies before anyone hears
  }
  // The log writer goes on with what queued meanwhile while the shard
  // hears of this group.
  if (!log_queue_.empty()) StartGroup();
  for (size_t i = 0; i < group.size(); i++) group[i].done(statuses[i]);
}

void SimStorage::FinishWrite(uint64_t write_id, WriteDone done) {
  done(Land(write_id, /*durable=*/false));
}

absl::Status SimStorage::Land(uint64_t write_id, bool durable) {
  CHARYBDIS_ASSERT(!issued_.empty());
  CHARYBDIS_ASSERT(issued_.front().id == write_id);  // writes finish in issue order
  IssuedWrite write = std::move(issued_.front());
  issued_.pop_front();
  if (write.fails) {
    stats_.failed++;
    return absl::UnavailableError("simulated disk write failure");
  }
  stats_.writes++;
  stats_.synced_writes += write.synced;
  WriteBatch batch = std::move(write.batch);
  if (faults_.misdirect_write_probability > 0) Misdirect(batch);
  if (durable) {
    unsynced_.clear();  // everything before it is durable now
    unsynced_last_puts_.clear();
    unsynced_at_.clear();
    ApplyBatch(batch, nullptr);
  } else {
    unsynced_.emplace_back();
    unsynced_last_puts_.push_back(LastPut(batch));
    unsynced_at_.push_back(simulator_.now());
    ApplyBatch(batch, &unsynced_.back());
  }
  return absl::OkStatus();
}

void SimStorage::Ingest(WriteBatch puts, WriteDone done) {
  Complete(WorkerJobDone(), 5, [this, puts = std::move(puts), fails = faults_.fail_writes, done = std::move(done)] {
    done(LandIngestion(puts, fails));
  });
}

void SimStorage::Compact(WriteDone done) {
  Complete(WorkerJobDone(), 6, [this, fails = faults_.fail_writes, done = std::move(done)] {
    if (fails) {
      stats_.failed++;
      return done(absl::UnavailableError("simulated disk write failure"));
    }
    stats_.compactions++;
    done(absl::OkStatus());
  });
}

Nanos SimStorage::WorkerJobDone() {
  // Its own thread, neither behind the disk's queue nor holding it up,
  // which runs one job at a time.
  worker_free_at_ = std::max(worker_free_at_, simulator_.now()) + DrawLatency(profile_.write(), random_) +
                    DrawLatency(profile_.sync(), random_) + faults_.extra_latency;
  return worker_free_at_;
}

absl::Status SimStorage::LandIngestion(const WriteBatch& puts, bool fails) {
  if (fails) {
    stats_.failed++;
    return absl::UnavailableError("simulated disk write failure");
  }
  std::set<std::string> keys;
  for (const WriteBatch::Operation& put : puts.operations) {
    CHARYBDIS_ASSERT(put.value.has_value());  // puts only
    CHARYBDIS_ASSERT(keys.empty() || *keys.rbegin() < put.key);  // ascending, distinct
    keys.insert(put.key);
  }
  for (Undo& undo : unsynced_) {
    std::erase_if(undo, [&keys](const auto& previous) { return keys.count(previous.first) > 0; });
  }
  stats_.ingestions++;
  ApplyBatch(puts, nullptr);
  return absl::OkStatus();
}

void SimStorage::Get(std::string key, GetDone done) {
  const bool fail = faults_.fail_reads;
  Complete(CompletionTime(profile_.read()), 3, [this, key = std::move(key), fail, done] {
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

std::vector<KeyValue> SimStorage::Read(const std::string& begin, const std::string& end, size_t limit) const {
  std::vector<KeyValue> rows;
  for (auto it = contents_.lower_bound(begin); it != contents_.end() && rows.size() < limit && (end.empty() || it->first < end);
       ++it) {
    rows.push_back(KeyValue{it->first, it->second});
  }
  return rows;
}

void SimStorage::Scan(std::string begin, std::string end, size_t limit, ScanDone done) {
  ScanRanges({ScanRange{std::move(begin), std::move(end), limit}},
             [done = std::move(done)](absl::StatusOr<std::vector<std::vector<KeyValue>>> ranges) {
               if (!ranges.ok()) return done(ranges.status());
               CHARYBDIS_ASSERT(ranges->size() == 1);
               done(std::move(ranges->front()));
             });
}

void SimStorage::ScanRanges(std::vector<ScanRange> ranges, ScanRangesDone done) {
  const bool fail = faults_.fail_reads;
  Complete(CompletionTime(profile_.read()), 4, [this, ranges = std::move(ranges), fail, done] {
    if (fail) {
      stats_.failed++;
      done(absl::UnavailableError("simulated disk read failure"));
      return;
    }
    stats_.reads++;
    std::vector<std::vector<KeyValue>> read;
    size_t entries = 0;
    for (const ScanRange& range : ranges) {
      read.push_back(Read(range.begin, range.end, range.limit));
      entries += read.back().size();
    }
    if (entries > 0 && faults_.corrupt_read_probability > 0) {
      // One entry of the whole read, as a Scan of one range picks one.
      size_t pick = random_.Below(entries);
      for (std::vector<KeyValue>& rows : read) {
        if (pick < rows.size()) {
          PerhapsCorrupt(rows[pick].key, rows[pick].value);
          break;
        }
        pick -= rows.size();
      }
    }
    done(std::move(read));
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
    unsynced_at_.pop_back();
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

void SimStorage::ApplyPeriodicSyncs() {
  if (sync_period_ == 0 || simulator_.now() < periodic_phase_) return;
  const Nanos last_tick =
      simulator_.now() - (simulator_.now() - periodic_phase_) % sync_period_;
  size_t durable = 0;
  while (durable < unsynced_at_.size() && unsynced_at_[durable] <= last_tick) durable++;
  if (durable == 0) return;
  stats_.syncs++;
  unsynced_.erase(unsynced_.begin(), unsynced_.begin() + static_cast<ptrdiff_t>(durable));
  unsynced_last_puts_.erase(unsynced_last_puts_.begin(),
                            unsynced_last_puts_.begin() + static_cast<ptrdiff_t>(durable));
  unsynced_at_.erase(unsynced_at_.begin(), unsynced_at_.begin() + static_cast<ptrdiff_t>(durable));
}

void SimStorage::Crash(CrashKind kind) {
  ApplyPeriodicSyncs();
  // What is not durable, in order: the unsynced batches applied, then the
  // writes issued and unfinished (failing ones never reach the disk; those
  // still queued for the log writer are in the process's memory only). The
  // OS may have written back any prefix of it; a power cut keeps none.
  std::vector<const WriteBatch*> issued;
  const size_t handed_to_os = issued_.size() - log_queue_.size();
  for (size_t i = 0; i < handed_to_os; i++) {
    if (!issued_[i].fails) issued.push_back(&issued_[i].batch);
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
  unsynced_at_.clear();
  issued_.clear();
  group_running_ = false;
  group_.clear();
  log_queue_.clear();
  last_completion_ = simulator_.now();
  worker_free_at_ = simulator_.now();
}

}  // namespace charybdis::sim
