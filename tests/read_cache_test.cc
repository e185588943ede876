#include "core/read_cache/read_cache.h"

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/env/random.h"
#include "tests/fake_env.h"
#include "gtest/gtest.h"

namespace charybdis {
namespace {

// An ordered in-memory disk whose writes and scans wait in two queues, so a
// test can finish a write before a scan issued earlier. A scan reads when
// it starts (as RocksDB does) or when it completes (as the simulated disk
// does); a write shows when it is done, or (writes_visible_at_issue) at
// once. Failing writes change nothing.
class TwoQueueStorage final : public Storage {
 public:
  explicit TwoQueueStorage(bool scan_reads_at_start) : scan_reads_at_start_(scan_reads_at_start) {}

  void Apply(WriteBatch batch, Durability, WriteDone done) override {
    if (writes_visible_at_issue) {
      // RocksDB's log writer: readers see the write before its callback runs.
      if (!fail_writes) Write(batch);
      writes_.push_back([done = std::move(done), fail = fail_writes] {
        done(fail ? absl::UnavailableError("failed") : absl::OkStatus());
      });
      return;
    }
    writes_.push_back([this, batch = std::move(batch), done = std::move(done), fail = fail_writes] {
      if (fail) return done(absl::UnavailableError("failed"));
      Write(batch);
      done(absl::OkStatus());
    });
  }
  void Write(const WriteBatch& batch) {
    for (const auto& operation : batch.operations) {
      if (operation.value) {
        contents_[operation.key] = *operation.value;
      } else {
        contents_.erase(operation.key);
      }
    }
  }
  void Get(std::string, GetDone done) override { done(std::optional<std::string>()); }
  void Compact(WriteDone done) override { writes_.push_back([done = std::move(done)] { done(absl::OkStatus()); }); }
  void Scan(std::string begin, std::string end, size_t limit, ScanDone done) override {
    scans_issued++;
    if (scan_reads_at_start_) {
      std::vector<KeyValue> rows = Read(begin, end, limit);
      scans_.push_back([rows, done = std::move(done)] { done(rows); });
    } else {
      scans_.push_back([this, begin, end, limit, done = std::move(done)] { done(Read(begin, end, limit)); });
    }
  }
  void ScanRanges(std::vector<ScanRange> ranges, ScanRangesDone done) override {
    scans_issued++;
    auto read = [this, ranges] {
      std::vector<std::vector<KeyValue>> read;
      for (const ScanRange& range : ranges) read.push_back(Read(range.begin, range.end, range.limit));
      return read;
    };
    if (scan_reads_at_start_) {
      scans_.push_back([read = read(), done = std::move(done)] { done(read); });
    } else {
      scans_.push_back([read, done = std::move(done)] { done(read()); });
    }
  }
  std::vector<KeyValue> Read(const std::string& begin, const std::string& end, size_t limit) const {
    std::vector<KeyValue> rows;
    for (auto it = contents_.lower_bound(begin); it != contents_.end() && it->first < end && rows.size() < limit;
         ++it) {
      rows.push_back(KeyValue{it->first, it->second});
    }
    return rows;
  }
  bool CompleteWrite() { return Complete(writes_); }
  bool CompleteScan() { return Complete(scans_); }
  void CompleteAll() {
    while (CompleteWrite() || CompleteScan()) {
    }
  }
  size_t writes_pending() const { return writes_.size(); }
  size_t scans_pending() const { return scans_.size(); }

  bool fail_writes = false;
  bool writes_visible_at_issue = false;
  int scans_issued = 0;

 private:
  static bool Complete(std::deque<std::function<void()>>& queue) {
    if (queue.empty()) return false;
    std::function<void()> next = std::move(queue.front());
    queue.pop_front();
    next();
    return true;
  }

  const bool scan_reads_at_start_;
  std::map<std::string, std::string> contents_;
  std::deque<std::function<void()>> writes_;
  std::deque<std::function<void()>> scans_;
};

// Fires the sites a test names.
class ScriptedBuggify final : public Buggify {
 public:
  bool Fires(std::string_view site) override { return firing.count(std::string(site)) > 0; }
  std::set<std::string> firing;
};

// Ranges of keys starting with "p" are cacheable, as partitions are.
bool StartsWithP(const std::string& begin, const std::string&) { return !begin.empty() && begin[0] == 'p'; }

struct Fixture {
  explicit Fixture(bool scan_reads_at_start = true, size_t capacity_bytes = 1 << 20)
      : storage(scan_reads_at_start),
        cache(storage, reactor, capacity_bytes, StartsWithP, metrics, buggify, &probes) {}

  void Put(const std::string& key, const std::string& value) {
    WriteBatch batch;
    batch.Put(key, value);
    cache.Apply(std::move(batch), Durability::kSynced, [](absl::Status) {});
  }
  // Writes each pair and lets storage finish the writes.
  void Store(const std::vector<std::pair<std::string, std::string>>& pairs) {
    for (const auto& [key, value] : pairs) Put(key, value);
    storage.CompleteAll();
  }
  void Delete(const std::string& key) {
    WriteBatch batch;
    batch.Delete(key);
    cache.Apply(std::move(batch), Durability::kSynced, [](absl::Status) {});
  }
  // Issues a scan; its answer lands in *out once storage or the reactor
  // completes it.
  void StartScan(const std::string& begin, const std::string& end, std::optional<std::vector<KeyValue>>* out,
                 size_t limit = SIZE_MAX) {
    cache.Scan(begin, end, limit, [out](absl::StatusOr<std::vector<KeyValue>> rows) {
      ASSERT_TRUE(rows.ok());
      *out = *rows;
    });
  }
  std::vector<KeyValue> ScanNow(const std::string& begin, const std::string& end, size_t limit = SIZE_MAX) {
    std::optional<std::vector<KeyValue>> rows;
    StartScan(begin, end, &rows, limit);
    storage.CompleteAll();
    reactor.RunAll();
    EXPECT_TRUE(rows.has_value());
    return rows.value_or(std::vector<KeyValue>{});
  }

  testing::QueuedReactor reactor;
  TwoQueueStorage storage;
  ShardMetrics metrics;
  ScriptedBuggify buggify;
  testing::CountingProbes probes;
  ReadCache cache;
};

std::vector<KeyValue> Rows(std::vector<std::pair<std::string, std::string>> pairs) {
  std::vector<KeyValue> rows;
  for (auto& [key, value] : pairs) rows.push_back(KeyValue{key, value});
  return rows;
}

TEST(ReadCacheTest, ASecondScanOfAFilledRangeIsServedFromMemory) {
  Fixture f;
  f.Store({{"p1/a", "1"}, {"p1/b", "2"}, {"p2/a", "3"}});
  EXPECT_EQ(f.ScanNow("p1/", "p1/~"), Rows({{"p1/a", "1"}, {"p1/b", "2"}}));
  EXPECT_EQ(f.storage.scans_issued, 1);
  EXPECT_EQ(f.metrics.read_cache_fills, 1u);
  // The whole range and a part of it, with a limit: no storage read.
  EXPECT_EQ(f.ScanNow("p1/", "p1/~"), Rows({{"p1/a", "1"}, {"p1/b", "2"}}));
  EXPECT_EQ(f.ScanNow("p1/b", "p1/~"), Rows({{"p1/b", "2"}}));
  EXPECT_EQ(f.ScanNow("p1/", "p1/~", 1), Rows({{"p1/a", "1"}}));
  EXPECT_EQ(f.storage.scans_issued, 1);
  EXPECT_EQ(f.metrics.read_cache_hits, 3u);
  // A range that reaches outside it goes to storage.
  EXPECT_EQ(f.ScanNow("p1/", "p2/~"), Rows({{"p1/a", "1"}, {"p1/b", "2"}, {"p2/a", "3"}}));
  EXPECT_EQ(f.storage.scans_issued, 2);
}

// A read of several ranges (a partition's range tombstones and a slice of
// its rows) fills the ones missing and is then served from memory, all at
// one moment; with a write in flight to one of them it goes to storage,
// every range in one read.
TEST(ReadCacheTest, AReadOfSeveralRangesFillsThemAndIsServedAsOne) {
  Fixture f;
  f.Store({{"p1/a", "1"}, {"p2/a", "2"}, {"p3/a", "3"}});
  f.ScanNow("p1/", "p1/~");  // cached already
  std::optional<std::vector<std::vector<KeyValue>>> read;
  auto scan_ranges = [&f, &read] {
    read.reset();
    f.cache.ScanRanges({ScanRange{"p1/", "p1/~"}, ScanRange{"p2/", "p2/~"}},
                       [&read](absl::StatusOr<std::vector<std::vector<KeyValue>>> parts) {
                         ASSERT_TRUE(parts.ok());
                         read = *parts;
                       });
    f.storage.CompleteAll();
    f.reactor.RunAll();
  };
  scan_ranges();
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(*read, (std::vector<std::vector<KeyValue>>{Rows({{"p1/a", "1"}}), Rows({{"p2/a", "2"}})}));
  EXPECT_EQ(f.metrics.read_cache_fills, 2u);  // p1, then p2 for this read
  EXPECT_EQ(f.storage.scans_issued, 2);
  scan_ranges();
  EXPECT_EQ(f.storage.scans_issued, 2);  // from memory
  EXPECT_EQ(f.metrics.read_cache_hits, 1u);

  f.Put("p3/b", "4");  // in flight
  std::optional<std::vector<std::vector<KeyValue>>> stored;
  f.cache.ScanRanges({ScanRange{"p1/", "p1/~"}, ScanRange{"p3/", "p3/~"}},
                     [&stored](absl::StatusOr<std::vector<std::vector<KeyValue>>> parts) { stored = *parts; });
  EXPECT_EQ(f.storage.scans_issued, 3);  // one storage read of both
  EXPECT_EQ(f.metrics.read_cache_fills_skipped, 1u);
  f.storage.CompleteAll();
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->size(), 2u);
}

TEST(ReadCacheTest, WritesDoneAfterTheFillAreServedAndFailedOnesAreNot) {
  Fixture f;
  f.Store({{"p1/a", "1"}, {"p1/b", "2"}});
  f.ScanNow("p1/", "p1/~");
  f.Put("p1/c", "3");
  f.Delete("p1/a");
  f.Put("p1/b", "two");
  // Not done yet: storage has not answered, so a read must not see them.
  EXPECT_EQ(f.ScanNow("p1/", "p1/~"), Rows({{"p1/a", "1"}, {"p1/b", "2"}}));
  f.storage.CompleteAll();
  f.storage.fail_writes = true;
  f.Put("p1/d", "4");
  f.storage.CompleteAll();
  EXPECT_EQ(f.ScanNow("p1/", "p1/~"), Rows({{"p1/b", "two"}, {"p1/c", "3"}}));
  EXPECT_EQ(f.storage.scans_issued, 1);
}

// A write done while the fill's scan runs: whether storage read before or
// after it, the cache holds it.
void WriteDoneDuringTheFill(bool scan_reads_at_start) {
  Fixture f(scan_reads_at_start);
  f.Store({{"p1/a", "1"}});
  std::optional<std::vector<KeyValue>> first;
  f.StartScan("p1/", "p1/~", &first);
  f.Put("p1/b", "2");
  f.Delete("p1/a");
  ASSERT_TRUE(f.storage.CompleteWrite());
  ASSERT_TRUE(f.storage.CompleteWrite());
  ASSERT_TRUE(f.storage.CompleteScan());
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(f.metrics.read_cache_fills, 1u);
  EXPECT_EQ(f.ScanNow("p1/", "p1/~"), Rows({{"p1/b", "2"}}));
  EXPECT_EQ(f.storage.scans_issued, 1);
  EXPECT_EQ(f.probes.reached["read_cache.fill_overtaken_by_write"], 2);  // p1/b and p1/a
}

TEST(ReadCacheTest, AWriteDoneDuringTheFillIsKeptWhenStorageReadsAtTheStart) { WriteDoneDuringTheFill(true); }

TEST(ReadCacheTest, AWriteDoneDuringTheFillIsKeptWhenStorageReadsAtTheEnd) { WriteDoneDuringTheFill(false); }

// A range's end is not in it: a write at that very key while the range
// fills belongs to whatever range holds the key, and must not linger in
// memory outside every range, where a later write cannot reach it.
TEST(ReadCacheTest, AWriteAtAFillsEndKeyIsNotKeptWithTheRange) {
  Fixture f;
  f.Store({{"p1/a", "1"}, {"p1/c", "old"}});
  std::optional<std::vector<KeyValue>> first;
  f.StartScan("p1/a", "p1/c", &first);
  f.Put("p1/c", "mid");
  ASSERT_TRUE(f.storage.CompleteWrite());
  ASSERT_TRUE(f.storage.CompleteScan());
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(*first, Rows({{"p1/a", "1"}}));
  f.Put("p1/c", "new");
  f.storage.CompleteAll();
  EXPECT_EQ(f.ScanNow("p1/", "p1/~"), Rows({{"p1/a", "1"}, {"p1/c", "new"}}));  // a fill, from storage
  EXPECT_EQ(f.ScanNow("p1/", "p1/~"), Rows({{"p1/a", "1"}, {"p1/c", "new"}}));  // from memory
}

TEST(ReadCacheTest, UnderTheTinyCapacitySiteEveryRangeLeavesAndScansGoToStorage) {
  Fixture f;
  f.Store({{"p1/a", "1"}, {"p2/a", "2"}});
  EXPECT_EQ(f.ScanNow("p1/", "p1/~"), Rows({{"p1/a", "1"}}));
  f.buggify.firing.insert("read_cache.tiny_capacity");
  EXPECT_EQ(f.ScanNow("p2/", "p2/~"), Rows({{"p2/a", "2"}}));
  EXPECT_EQ(f.cache.bytes(), 0u);  // both ranges left, the one just filled too
  EXPECT_EQ(f.probes.reached["read_cache.evicted_for_capacity"], 2);
  f.buggify.firing.clear();
  EXPECT_EQ(f.ScanNow("p1/", "p1/~"), Rows({{"p1/a", "1"}}));
  EXPECT_EQ(f.storage.scans_issued, 3);  // each scan read storage
  EXPECT_EQ(f.ScanNow("p1/", "p1/~"), Rows({{"p1/a", "1"}}));
  EXPECT_EQ(f.storage.scans_issued, 3);  // and the cache works again
}

TEST(ReadCacheTest, AFillIsNotKeptWhileAWriteToItsRangeIsInFlight) {
  Fixture f;
  f.Put("p1/a", "1");  // in flight: storage may or may not show it to the scan
  EXPECT_EQ(f.storage.writes_pending(), 1u);
  std::optional<std::vector<KeyValue>> rows;
  f.StartScan("p1/", "p1/~", &rows);
  f.storage.CompleteAll();
  EXPECT_EQ(f.metrics.read_cache_fills, 0u);
  EXPECT_EQ(f.metrics.read_cache_fills_skipped, 1u);
  // Once it is done, the next scan fills.
  EXPECT_EQ(f.ScanNow("p1/", "p1/~"), Rows({{"p1/a", "1"}}));
  EXPECT_EQ(f.metrics.read_cache_fills, 1u);
  f.ScanNow("p1/", "p1/~");
  EXPECT_EQ(f.storage.scans_issued, 2);
}

TEST(ReadCacheTest, RangesItDoesNotAcceptOrWithALimitGoToStorage) {
  Fixture f;
  f.Store({{"q1/a", "1"}, {"p1/a", "1"}});
  f.ScanNow("q1/", "q1/~");
  f.ScanNow("q1/", "q1/~");
  f.ScanNow("p1/", "p1/~", 5);
  f.ScanNow("p1/", "p1/~", 5);
  EXPECT_EQ(f.storage.scans_issued, 4);
  EXPECT_EQ(f.metrics.read_cache_fills, 0u);
}

TEST(ReadCacheTest, TheLeastRecentlyUsedRangesLeaveFirstAndLargeOnesAreNeverKept) {
  // Each range below costs 277 bytes (one entry of 108 with its overhead,
  // and the range's own 169); 8 fit, and a range may take an eighth.
  Fixture f(true, 8 * 300);
  for (char p = 'a'; p <= 'j'; p++) f.Put(std::string("p") + p + "/a", std::string(8, 'v'));
  f.storage.CompleteAll();
  for (char p = 'a'; p <= 'j'; p++) {
    f.ScanNow(std::string("p") + p + "/", std::string("p") + p + "/~");
    if (p > 'a') f.ScanNow("pa/", "pa/~");  // keeps "pa" the most recently used
  }
  EXPECT_LE(f.cache.bytes(), size_t{8 * 300});
  EXPECT_GT(f.metrics.read_cache_evictions, 0u);
  const int scans = f.storage.scans_issued;
  f.ScanNow("pa/", "pa/~");
  EXPECT_EQ(f.storage.scans_issued, scans);  // still cached
  f.ScanNow("pb/", "pb/~");
  EXPECT_EQ(f.storage.scans_issued, scans + 1);  // left first
  // A range larger than an eighth of the capacity is read, not kept.
  for (int i = 0; i < 10; i++) f.Put("pz/" + std::to_string(i), std::string(100, 'v'));
  f.storage.CompleteAll();
  const uint64_t skipped = f.metrics.read_cache_fills_skipped;
  EXPECT_EQ(f.ScanNow("pz/", "pz/~").size(), 10u);
  EXPECT_EQ(f.metrics.read_cache_fills_skipped, skipped + 1);
}

// A write that keeps a cached range within an eighth of the capacity keeps
// it cached: the bound a write checks is the one a fill did.
TEST(ReadCacheTest, AWriteThatKeepsARangeWithinAnEighthKeepsItCached) {
  Fixture f(true, 8 * 300);  // an eighth: 300 bytes; the range below costs 277
  f.Store({{"pa/a", std::string(8, 'v')}});
  f.ScanNow("pa/", "pa/~");
  const int scans = f.storage.scans_issued;
  f.Store({{"pa/a", std::string(8, 'w')}});
  EXPECT_EQ(f.ScanNow("pa/", "pa/~"), Rows({{"pa/a", std::string(8, 'w')}}));
  EXPECT_EQ(f.storage.scans_issued, scans) << "evicted by a write that did not grow it past an eighth";
}

// Random writes, scans and completion orders against both kinds of storage:
// a scan the cache serves with no write to its range in flight equals what
// storage holds, and once everything is done every range reads as storage
// holds it.
TEST(ReadCacheTest, ServesWhatStorageHoldsUnderRandomInterleavings) {
  const std::vector<std::pair<std::string, std::string>> ranges = {
      {"pa/", "pa/~"}, {"pa/k1", "pa/k3"}, {"pb/", "pb/~"}, {"pa/", "pb/~"}};
  uint64_t hits = 0, fills = 0;
  for (uint64_t seed = 1; seed <= 200; seed++) {
    Random random(seed);
    Fixture f(seed % 2 == 0, 4096 + random.Below(8192));
    f.storage.writes_visible_at_issue = seed % 3 == 0;
    int in_flight = 0;
    int writes_issued = 0;
    int writes_done = 0;
    for (int step = 0; step < 300; step++) {
      const uint64_t what = random.Below(10);
      const std::string key = std::string(random.Chance(0.5) ? "pa/k" : "pb/k") + std::to_string(random.Below(5));
      if (what < 3) {
        WriteBatch batch;
        random.Chance(0.7) ? batch.Put(key, std::to_string(step)) : batch.Delete(key);
        in_flight++;
        writes_issued++;
        f.cache.Apply(std::move(batch), Durability::kSynced, [&](absl::Status) {
          in_flight--;
          writes_done++;
        });
      } else if (what < 6) {
        const auto& [begin, end] = ranges[random.Below(ranges.size())];
        // No write in flight at the start, and none since: the answer must
        // be exactly what storage holds.
        const bool quiet = in_flight == 0;
        const int issued_before = writes_issued;
        f.cache.Scan(begin, end, SIZE_MAX, [&, quiet, issued_before, begin = begin, end = end](
                                               absl::StatusOr<std::vector<KeyValue>> rows) {
          ASSERT_TRUE(rows.ok());
          if (quiet && writes_issued == issued_before) {
            EXPECT_EQ(*rows, f.storage.Read(begin, end, SIZE_MAX));
          }
        });
      } else if (what < 8) {
        f.storage.CompleteWrite();
      } else {
        f.storage.CompleteScan();
        f.reactor.RunAll();
      }
    }
    f.storage.CompleteAll();
    f.reactor.RunAll();
    for (const auto& [begin, end] : ranges) {
      EXPECT_EQ(f.ScanNow(begin, end), f.storage.Read(begin, end, SIZE_MAX)) << "seed " << seed;
    }
    hits += f.metrics.read_cache_hits;
    fills += f.metrics.read_cache_fills;
  }
  // The interleavings did reach the cache's paths.
  EXPECT_GT(hits, 5000u);
  EXPECT_GT(fills, 500u);
}

}  // namespace
}  // namespace charybdis
