#include "sim/sim_storage.h"

#include <algorithm>

#include "core/assert.h"
#include "sim/latency.h"

namespace charybdis::sim {

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

void SimStorage::ApplyTo(const WriteBatch& batch, std::map<std::string, std::string>& target) {
  for (const WriteBatch::Operation& operation : batch.operations) {
    if (operation.value.has_value()) {
      target[operation.key] = *operation.value;
    } else {
      target.erase(operation.key);
    }
  }
}

void SimStorage::Apply(WriteBatch batch, Durability durability, WriteDone done) {
  const bool synced = durability == Durability::kSynced;
  const Nanos extra = synced ? DrawLatency(profile_.sync(), random_) : 0;
  const Nanos at = CompletionTime(profile_.write(), extra);
  const bool fail = faults_.fail_writes;
  Complete(at, synced ? 2 : 1, [this, batch = std::move(batch), synced, fail, done] {
    if (fail) {
      stats_.failed++;
      done(absl::UnavailableError("simulated disk write failure"));
      return;
    }
    stats_.writes++;
    ApplyTo(batch, visible_);
    if (synced) {
      stats_.synced_writes++;
      for (const WriteBatch& earlier : unsynced_) ApplyTo(earlier, durable_);
      unsynced_.clear();
      ApplyTo(batch, durable_);
    } else {
      unsynced_.push_back(batch);
    }
    done(absl::OkStatus());
  });
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
    auto it = visible_.find(key);
    if (it == visible_.end()) {
      done(std::optional<std::string>());
    } else {
      done(std::optional<std::string>(it->second));
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
             for (auto it = visible_.lower_bound(begin);
                  it != visible_.end() && rows.size() < limit && (end.empty() || it->first < end);
                  ++it) {
               rows.push_back(KeyValue{it->first, it->second});
             }
             done(std::move(rows));
           });
}

void SimStorage::Crash() {
  // The OS may have written back some of the unsynced batches, in order.
  const uint64_t survivors = random_.Below(unsynced_.size() + 1);
  for (uint64_t i = 0; i < survivors; i++) ApplyTo(unsynced_[i], durable_);
  stats_.batches_lost_in_crashes += unsynced_.size() - survivors;
  unsynced_.clear();
  visible_ = durable_;
  last_completion_ = simulator_.now();
}

}  // namespace charybdis::sim
