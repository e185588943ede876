#include "core/read_cache/read_cache.h"

#include <memory>
#include <utility>

#include "core/env/assert.h"

namespace charybdis {

namespace {

// What an entry costs beyond its bytes: the tree node and two strings.
constexpr size_t kEntryOverheadBytes = 96;

size_t EntryBytes(const std::string& key, const std::string& value) {
  return key.size() + value.size() + kEntryOverheadBytes;
}

// What a range costs beside its entries (its bounds, twice its first key,
// a map and a list node), so that ranges holding nothing are bounded too.
constexpr size_t kRangeOverheadBytes = 160;

size_t RangeBytes(const std::string& begin, const std::string& end) {
  return 2 * begin.size() + end.size() + kRangeOverheadBytes;
}

}  // namespace

ReadCache::ReadCache(Storage& storage, Reactor& reactor, size_t capacity_bytes, Cacheable cacheable,
                     ShardMetrics& metrics, Buggify& buggify, Probes* probes)
    : storage_(storage),
      reactor_(reactor),
      capacity_bytes_(capacity_bytes),
      cacheable_(cacheable),
      metrics_(metrics),
      buggify_(buggify),
      probes_(probes) {
  CHARYBDIS_ASSERT(probes_ != nullptr);
}

std::map<std::string, ReadCache::Range>::iterator ReadCache::Holding(const std::string& key) {
  auto it = ranges_.upper_bound(key);
  if (it == ranges_.begin()) return ranges_.end();
  --it;
  CHARYBDIS_ASSERT(it->first <= key);
  return key < it->second.end ? it : ranges_.end();
}

std::map<std::string, ReadCache::Range>::iterator ReadCache::Covering(const std::string& begin,
                                                                      const std::string& end) {
  if (end.empty()) return ranges_.end();  // no upper bound: never cached
  auto it = Holding(begin);
  return it != ranges_.end() && end <= it->second.end ? it : ranges_.end();
}

bool ReadCache::WriteInFlight(const std::string& begin, const std::string& end) const {
  auto it = keys_in_flight_.lower_bound(begin);
  return it != keys_in_flight_.end() && *it < end;
}

void ReadCache::Apply(WriteBatch batch, Durability durability, WriteDone done) {
  Write(std::move(batch), std::move(done), [this, durability](WriteBatch issued, WriteDone issued_done) {
    storage_.Apply(std::move(issued), durability, std::move(issued_done));
  });
}

// An ingestion is a write of its puts to the cache: the same keys in
// flight, the same update of what is cached once it is done.
void ReadCache::Ingest(WriteBatch puts, WriteDone done) {
  Write(std::move(puts), std::move(done), [this](WriteBatch issued, WriteDone issued_done) {
    storage_.Ingest(std::move(issued), std::move(issued_done));
  });
}

void ReadCache::Write(WriteBatch batch, WriteDone done, const std::function<void(WriteBatch, WriteDone)>& issue) {
  if (capacity_bytes_ == 0) return issue(std::move(batch), std::move(done));
  for (const WriteBatch::Operation& operation : batch.operations) keys_in_flight_.insert(operation.key);
  auto copy = std::make_shared<WriteBatch>(batch);
  issue(std::move(batch), [this, copy, done = std::move(done)](absl::Status status) {
    for (const WriteBatch::Operation& operation : copy->operations) {
      CHARYBDIS_ASSERT(keys_in_flight_.find(operation.key) != keys_in_flight_.end());
      keys_in_flight_.erase(keys_in_flight_.find(operation.key));
    }
    if (status.ok()) ApplyDone(*copy);
    done(std::move(status));
  });
}

void ReadCache::ApplyDone(const WriteBatch& batch) {
  for (const WriteBatch::Operation& operation : batch.operations) {
    if (!fills_.empty()) {
      const uint64_t sequence = ++last_write_sequence_;
      writes_during_fills_[operation.key] = DoneWrite{sequence, operation.value};
      write_order_.emplace_back(sequence, operation.key);
    }
    auto range = Holding(operation.key);
    if (range == ranges_.end()) continue;
    auto entry = entries_.find(operation.key);
    if (entry != entries_.end()) {
      const size_t old_bytes = EntryBytes(entry->first, entry->second);
      CHARYBDIS_ASSERT(range->second.bytes >= old_bytes);
      CHARYBDIS_ASSERT(bytes_ >= old_bytes);
      range->second.bytes -= old_bytes;
      bytes_ -= old_bytes;
      if (operation.value) {
        entry->second = *operation.value;
      } else {
        entries_.erase(entry);
      }
    } else if (operation.value) {
      entries_.emplace(operation.key, *operation.value);
    }
    if (operation.value) {
      range->second.bytes += EntryBytes(operation.key, *operation.value);
      bytes_ += EntryBytes(operation.key, *operation.value);
    }
    CHARYBDIS_ASSERT(range->second.bytes <= bytes_);  // bytes_ sums every range's
    if (range->second.bytes > capacity_bytes_ / 8) Evict(range);  // grew past what a fill may keep
  }
  while (bytes_ > capacity_bytes_ && !recency_.empty()) Evict(ranges_.find(recency_.back()));
  CHARYBDIS_ASSERT(!recency_.empty() || bytes_ == 0);
}

void ReadCache::Get(std::string key, GetDone done) { storage_.Get(std::move(key), std::move(done)); }

void ReadCache::Scan(std::string begin, std::string end, size_t limit, ScanDone done) {
  if (capacity_bytes_ == 0) return storage_.Scan(std::move(begin), std::move(end), limit, std::move(done));
  if (auto range = Covering(begin, end); range != ranges_.end()) {
    metrics_.read_cache_hits++;
    return ServeFromMemory(range, begin, end, limit, std::move(done));
  }
  if (limit == SIZE_MAX && !end.empty() && cacheable_(begin, end)) {
    metrics_.read_cache_misses++;
    if (!WriteInFlight(begin, end)) return StartFill(std::move(begin), std::move(end), std::move(done));
    metrics_.read_cache_fills_skipped++;
  }
  storage_.Scan(std::move(begin), std::move(end), limit, std::move(done));
}

void ReadCache::StartFill(std::string begin, std::string end, ScanDone done) {
  CHARYBDIS_ASSERT(!end.empty());  // a range without an end is never cached
  const uint64_t fill_id = ++last_fill_id_;
  fills_.emplace(fill_id, Fill{begin, end, last_write_sequence_});
  storage_.Scan(std::move(begin), std::move(end), SIZE_MAX,
                [this, fill_id, done = std::move(done)](absl::StatusOr<std::vector<KeyValue>> stored) {
                  if (stored.ok()) {
                    FinishFill(fill_id, *stored);
                  } else {
                    fills_.erase(fill_id);
                  }
                  ForgetWritesBeforeFills();
                  done(std::move(stored));
                });
}

void ReadCache::FinishFill(uint64_t fill_id, const std::vector<KeyValue>& stored) {
  auto it = fills_.find(fill_id);
  CHARYBDIS_ASSERT(it != fills_.end());
  Fill fill = std::move(it->second);
  fills_.erase(it);
  std::map<std::string, std::string> entries;
  for (const KeyValue& entry : stored) {
    CHARYBDIS_ASSERT(fill.begin <= entry.key);
    CHARYBDIS_ASSERT(entry.key < fill.end);
    entries.emplace(entry.key, entry.value);
  }
  // What storage returned may predate the writes done since the fill
  // started (a simulated disk reads when the scan completes, RocksDB when
  // it starts); the last of them per key, on top, gives the range as it is
  // now either way.
  for (auto it = writes_during_fills_.lower_bound(fill.begin); it != writes_during_fills_.end() && it->first < fill.end;
       ++it) {
    const DoneWrite& write = it->second;
    if (write.sequence <= fill.started_after) continue;
    // The race a fill must survive: a write done while it read.
    CHARYBDIS_PROBE(probes_, "read_cache.fill_overtaken_by_write");
    if (write.value) {
      entries[it->first] = *write.value;
    } else {
      entries.erase(it->first);
    }
  }
  Install(fill.begin, fill.end, std::move(entries));
}

void ReadCache::ForgetWritesBeforeFills() {
  // Fill ids grow with their start, so the first running fill started first.
  const uint64_t oldest_start = fills_.empty() ? last_write_sequence_ : fills_.begin()->second.started_after;
  while (!write_order_.empty() && write_order_.front().first <= oldest_start) {
    auto write = writes_during_fills_.find(write_order_.front().second);
    CHARYBDIS_ASSERT(write != writes_during_fills_.end());
    if (write->second.sequence == write_order_.front().first) writes_during_fills_.erase(write);
    write_order_.pop_front();
  }
  CHARYBDIS_ASSERT(!fills_.empty() || writes_during_fills_.empty());
}

void ReadCache::Install(const std::string& begin, const std::string& end,
                        std::map<std::string, std::string> entries) {
  size_t range_bytes = RangeBytes(begin, end);
  for (const auto& [key, value] : entries) range_bytes += EntryBytes(key, value);
  if (range_bytes > capacity_bytes_ / 8) {
    metrics_.read_cache_fills_skipped++;
    return;
  }
  // Ranges it overlaps leave: their entries inside [begin, end) are the
  // ones just read, and those outside are cheaper to read again than to
  // merge.
  auto overlapping = ranges_.upper_bound(begin);
  if (overlapping != ranges_.begin() && std::prev(overlapping)->second.end > begin) --overlapping;
  while (overlapping != ranges_.end() && overlapping->first < end) {
    auto next = std::next(overlapping);
    Evict(overlapping);
    overlapping = next;
  }
  entries_.insert(entries.begin(), entries.end());
  recency_.push_front(begin);
  ranges_.emplace(begin, Range{end, range_bytes, recency_.begin()});
  bytes_ += range_bytes;
  metrics_.read_cache_fills++;
  // A cache under pressure: every range leaves, the newest too.
  const size_t capacity_bytes = buggify_.Fires("read_cache.tiny_capacity") ? 0 : capacity_bytes_;
  while (bytes_ > capacity_bytes) {
    CHARYBDIS_PROBE(probes_, "read_cache.evicted_for_capacity");
    Evict(ranges_.find(recency_.back()));
  }
  CHARYBDIS_ASSERT(bytes_ <= capacity_bytes_);
}

void ReadCache::Evict(std::map<std::string, Range>::iterator range) {
  CHARYBDIS_ASSERT(range != ranges_.end());
  CHARYBDIS_ASSERT(*range->second.recency == range->first);
  entries_.erase(entries_.lower_bound(range->first), entries_.lower_bound(range->second.end));
  CHARYBDIS_ASSERT(bytes_ >= range->second.bytes);
  bytes_ -= range->second.bytes;
  recency_.erase(range->second.recency);
  ranges_.erase(range);
  metrics_.read_cache_evictions++;
}

void ReadCache::ScanRanges(std::vector<ScanRange> ranges, ScanRangesDone done) {
  if (capacity_bytes_ == 0) return storage_.ScanRanges(std::move(ranges), std::move(done));
  if (ServedFromMemory(ranges, done)) {
    metrics_.read_cache_hits++;
    return;
  }
  metrics_.read_cache_misses++;
  std::vector<const ScanRange*> missing;
  for (const ScanRange& range : ranges) {
    if (Covering(range.begin, range.end) != ranges_.end()) continue;
    const bool fillable = range.limit == SIZE_MAX && !range.end.empty() && cacheable_(range.begin, range.end);
    if (!fillable || WriteInFlight(range.begin, range.end)) {
      if (fillable) metrics_.read_cache_fills_skipped++;
      return storage_.ScanRanges(std::move(ranges), std::move(done));
    }
    missing.push_back(&range);
  }
  // The missing ranges fill first, each as a Scan fills one. Once all are
  // in, the whole read is served from memory at one moment: the cache
  // keeps every range it holds as every write done has left it, so that
  // is one snapshot. A range that did not stay (its fill failed, or it was
  // evicted) sends the read to storage.
  CHARYBDIS_ASSERT(!missing.empty());  // else it was served from memory
  auto waiting = std::make_shared<size_t>(missing.size());
  auto read = std::make_shared<std::pair<std::vector<ScanRange>, ScanRangesDone>>(ranges, std::move(done));
  for (const ScanRange* range : missing) {
    StartFill(range->begin, range->end, [this, waiting, read](const absl::StatusOr<std::vector<KeyValue>>&) {
      CHARYBDIS_ASSERT(*waiting > 0);
      if (--*waiting > 0) return;
      if (!ServedFromMemory(read->first, read->second)) storage_.ScanRanges(read->first, read->second);
    });
  }
}

bool ReadCache::ServedFromMemory(const std::vector<ScanRange>& ranges, const ScanRangesDone& done) {
  std::vector<std::map<std::string, Range>::iterator> covering;
  for (const ScanRange& range : ranges) {
    auto cached = Covering(range.begin, range.end);
    if (cached == ranges_.end()) return false;
    covering.push_back(cached);
  }
  std::vector<std::vector<KeyValue>> read;
  for (size_t i = 0; i < ranges.size(); i++) {
    read.push_back(FromMemory(covering[i], ranges[i].begin, ranges[i].end, ranges[i].limit));
  }
  reactor_.Post([read = std::move(read), done]() mutable { done(std::move(read)); });
  return true;
}

std::vector<KeyValue> ReadCache::FromMemory(std::map<std::string, Range>::iterator range, const std::string& begin,
                                            const std::string& end, size_t limit) {
  // Covering: the range holds [begin, end).
  CHARYBDIS_ASSERT(range->first <= begin);
  CHARYBDIS_ASSERT(end <= range->second.end);
  recency_.splice(recency_.begin(), recency_, range->second.recency);
  std::vector<KeyValue> rows;
  for (auto it = entries_.lower_bound(begin); it != entries_.end() && it->first < end && rows.size() < limit;
       ++it) {
    rows.push_back(KeyValue{it->first, it->second});
  }
  return rows;
}

void ReadCache::ServeFromMemory(std::map<std::string, Range>::iterator range, const std::string& begin,
                                const std::string& end, size_t limit, ScanDone done) {
  reactor_.Post([rows = FromMemory(range, begin, end, limit), done = std::move(done)]() mutable {
    done(std::move(rows));
  });
}

}  // namespace charybdis
