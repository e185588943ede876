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
  const bool fail = faults_.fail_writes;
  Complete(at, synced ? 2 : 1, [this, batch = std::move(batch), synced, fail, done] {
    if (fail) {
      stats_.failed++;
      done(absl::UnavailableError("simulated disk write failure"));
      return;
    }
    stats_.writes++;
    if (synced) {
      stats_.synced_writes++;
      unsynced_.clear();  // everything before it is durable now
      ApplyBatch(batch, nullptr);
    } else {
      unsynced_.emplace_back();
      ApplyBatch(batch, &unsynced_.back());
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
    auto it = contents_.find(key);
    if (it == contents_.end()) {
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
             for (auto it = contents_.lower_bound(begin);
                  it != contents_.end() && rows.size() < limit && (end.empty() || it->first < end);
                  ++it) {
               rows.push_back(KeyValue{it->first, it->second});
             }
             done(std::move(rows));
           });
}

void SimStorage::Crash() {
  // The OS may have written back some of the unsynced batches, in order:
  // take back the others, newest first.
  const uint64_t survivors = random_.Below(unsynced_.size() + 1);
  stats_.batches_lost_in_crashes += unsynced_.size() - survivors;
  while (unsynced_.size() > survivors) {
    const Undo& undo = unsynced_.back();
    for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
      if (it->second.has_value()) {
        contents_[it->first] = *it->second;
      } else {
        contents_.erase(it->first);
      }
    }
    unsynced_.pop_back();
  }
  unsynced_.clear();
  last_completion_ = simulator_.now();
}

}  // namespace charybdis::sim
