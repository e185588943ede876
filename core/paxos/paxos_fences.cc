#include "core/paxos/paxos_fences.h"

#include <limits>
#include <optional>
#include <vector>

#include "core/data/big_endian.h"
#include "core/data/checked_value.h"
#include "core/data/span_key.h"
#include "core/data/storage_codec.h"
#include "core/env/assert.h"

namespace charybdis {

void PaxosFences::Load(const std::vector<KeyValue>& stored) {
  CHARYBDIS_ASSERT(!loaded_);
  for (const KeyValue& entry : stored) {
    const std::optional<SpanKeyParts> key = ParseSpanKey(kKeyPrefix, entry.key);
    CHARYBDIS_ASSERT(key.has_value());  // the caller's scan: keys under the prefix
    const std::optional<std::string_view> payload = checked_value::Open(entry.key, entry.value);
    // Unreadable, the fence was at most now: refusing every ballot below
    // now is as safe, and proposers draw theirs above.
    if (!payload || payload->size() != 8) {
      CHARYBDIS_PROBE(env_.probes, "storage.corrupt_paxos_fence");
      tables_[key->table][{key->last, key->first}] = env_.clock->Now() / kMicrosecond;
      continue;
    }
    tables_[key->table][{key->last, key->first}] = static_cast<int64_t>(ReadBigEndian(*payload, 8));
  }
  loaded_ = true;
}

int64_t PaxosFences::FenceOf(const std::string& table, Token token) const {
  CHARYBDIS_ASSERT(loaded_);
  auto spans = tables_.find(table);
  if (spans == tables_.end()) return 0;
  int64_t fence = 0;
  ForEachSpanHolding(spans->second, token, [&fence](int64_t held) { fence = std::max(fence, held); });
  return fence;
}

void PaxosFences::Raise(const std::string& table, Token first, Token last, int64_t fence_us,
                        std::function<void(absl::Status)> done) {
  CHARYBDIS_ASSERT(loaded_ && first <= last && fence_us > 0);
  WriteBatch batch;
  // Never back, on disk as in memory (a fence that came late).
  auto known = tables_[table].find({last, first});
  if (known != tables_[table].end()) fence_us = std::max(fence_us, known->second);
  std::string payload;
  AppendBigEndian(payload, static_cast<uint64_t>(fence_us), 8);
  const std::string key = SpanKey(kKeyPrefix, table, first, last);
  batch.Put(key, checked_value::Seal(key, payload));
  // Spans inside this one with lower fences say nothing more.
  const std::vector<std::pair<Token, Token>> covered =
      SpansInside(tables_[table], first, last, [fence_us](int64_t older) { return older <= fence_us; });
  for (const auto& [covered_last, covered_first] : covered) {
    batch.Delete(SpanKey(kKeyPrefix, table, covered_first, covered_last));
  }
  env_.storage->Apply(std::move(batch), Durability::kSynced,
                      [this, table, first, last, fence_us, covered, done = std::move(done)](absl::Status status) {
                        if (status.ok()) {
                          Spans& spans = tables_[table];
                          int64_t& fence = spans[{last, first}];
                          fence = std::max(fence, fence_us);
                          for (const auto& bounds : covered) spans.erase(bounds);
                        }
                        done(status);
                      });
}

}  // namespace charybdis
