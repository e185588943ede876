#include "core/repair/dropped_tables.h"

#include <utility>

#include "core/data/storage_codec.h"
#include "core/env/assert.h"

namespace charybdis::repair {

namespace {

// A failed disk: the reclaim tries again after this.
constexpr Nanos kRetry = 1 * kSecond;

}  // namespace

void DroppedTables::Reclaim(const std::set<std::string>& dropped) {
  for (const std::string& table : dropped) {
    if (known_.insert(table).second) queue_.push_back(table);
  }
  CHARYBDIS_ASSERT(queue_.size() <= known_.size());
  if (!busy_ && !queue_.empty()) Next();
}

std::vector<std::string> DroppedTables::PrefixesOf(const std::string& table) const {
  return {storage_codec::TablePrefix(table), storage_codec::PaxosTablePrefix(table)};
}

void DroppedTables::Next() {
  busy_ = true;
  if (queue_.empty()) {
    if (!deleted_) {
      busy_ = false;
      return;
    }
    // The deletes only hid the keys; a compaction gives their space back.
    return env_.storage->Compact([this](absl::Status compacted) {
      CHARYBDIS_ASSERT(busy_);
      busy_ = false;
      deleted_ = !compacted.ok();  // compacted again with the next table
      if (!queue_.empty()) Next();
    });
  }
  CHARYBDIS_ASSERT(prefix_ < PrefixesOf(queue_.front()).size());
  const std::string prefix = PrefixesOf(queue_.front())[prefix_];
  const std::string begin = deleted_up_to_.empty() ? prefix : deleted_up_to_ + std::string(1, '\0');
  env_.storage->Scan(begin, storage_codec::PrefixEnd(prefix), kBatchKeys,
                     [this](absl::StatusOr<std::vector<KeyValue>> scanned) { OnScanned(std::move(scanned)); });
}

void DroppedTables::OnScanned(absl::StatusOr<std::vector<KeyValue>> scanned) {
  CHARYBDIS_ASSERT(busy_ && !queue_.empty());
  if (!scanned.ok()) {
    env_.clock->After(kRetry, [this] { Next(); });
    return;
  }
  CHARYBDIS_ASSERT(scanned->size() <= kBatchKeys);  // Storage::Scan's limit
  if (scanned->empty()) {
    deleted_up_to_.clear();
    if (++prefix_ == PrefixesOf(queue_.front()).size()) {
      CHARYBDIS_PROBE(env_.probes, "gc.dropped_table_reclaimed");
      queue_.pop_front();
      prefix_ = 0;
    }
    return env_.reactor->Post([this] { Next(); });
  }
  deleted_up_to_ = scanned->back().key;
  WriteBatch batch;
  for (KeyValue& entry : *scanned) batch.Delete(std::move(entry.key));
  const uint64_t pairs = batch.operations.size();
  env_.storage->Apply(std::move(batch), Durability::kUnsynced, [this, pairs](absl::Status applied) {
    CHARYBDIS_ASSERT(busy_);
    if (!applied.ok()) {
      env_.clock->After(kRetry, [this] { Next(); });
      return;
    }
    metrics_.dropped_table_pairs_deleted += pairs;
    deleted_ = true;
    Next();
  });
}

}  // namespace charybdis::repair
