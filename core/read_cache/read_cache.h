#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/telemetry/metrics.h"
#include "core/env/buggify.h"
#include "core/env/probe.h"
#include "core/env/reactor.h"
#include "core/env/storage.h"

namespace charybdis {

// A Storage that keeps in memory the key ranges it has scanned whole, kept
// coherent with every write that passes through it, in the spirit of
// ScyllaDB's row cache.
//
// Why: every version of a cell is its own stored key (core/data/
// storage_codec.h), and reads delete the versions that lost. In an LSM
// tree those deletes stay as tombstones until compaction, and every later
// scan of the row walks them: a row written thousands of times (one hot
// row under LWT) costs more to read with every write. A scan served from
// here walks only the live versions.
//
// Which ranges: a Scan with no limit whose range `cacheable` accepts fills
// its range, unless a write to that range is in flight (issued, not yet
// done) when the scan starts. Writes done while the fill's scan runs are
// applied, in order, on top of what it returns, which gives the range as
// it is now whether storage read when the scan started (RocksDB) or when
// it completed (the simulated disk). A write in flight at the start could
// be shown by storage before it is done (RocksDB's log writer applies it
// on its thread, then posts the callback), and of two such writes to one
// key the cache would briefly hold the first's value after the read had
// seen the second's; the rule keeps that from happening. Later scans
// inside a cached range are served from memory (through the reactor, as
// storage answers). Gets pass through.
//
// Bounded by `capacity_bytes`: the least recently used ranges leave first;
// a range larger than an eighth of the capacity is never kept.
class ReadCache final : public Storage {
 public:
  using Cacheable = bool (*)(const std::string& begin, const std::string& end);

  // `buggify`: site read_cache.tiny_capacity evicts as if the capacity
  // were 0 (every range leaves at once: the next scan reads storage).
  ReadCache(Storage& storage, Reactor& reactor, size_t capacity_bytes, Cacheable cacheable,
            ShardMetrics& metrics, Buggify& buggify, Probes* probes);

  void Apply(WriteBatch batch, Durability durability, WriteDone done) override;
  void Get(std::string key, GetDone done) override;
  void Scan(std::string begin, std::string end, size_t limit, ScanDone done) override;
  // From memory when every range is cached, or once the missing ones are
  // filled, else from storage: never some of each, which would be no one
  // snapshot.
  void ScanRanges(std::vector<ScanRange> ranges, ScanRangesDone done) override;
  void Ingest(WriteBatch puts, WriteDone done) override;
  // What is cached stays: a compaction changes nothing a read sees.
  void Compact(WriteDone done) override { storage_.Compact(std::move(done)); }

  size_t bytes() const { return bytes_; }

 private:
  struct Range {
    std::string end;
    size_t bytes = 0;
    std::list<std::string>::iterator recency;  // into recency_
  };
  struct Fill {
    std::string begin, end;
    uint64_t started_after = 0;  // the sequence number of the last write done before it
  };
  // The last write done to a key while any fill ran.
  struct DoneWrite {
    uint64_t sequence = 0;
    std::optional<std::string> value;  // nullopt: deleted
  };

  // The cached range holding [begin, end), or ranges_.end().
  std::map<std::string, Range>::iterator Covering(const std::string& begin, const std::string& end);
  // The cached range holding `key`, or ranges_.end().
  std::map<std::string, Range>::iterator Holding(const std::string& key);
  bool WriteInFlight(const std::string& begin, const std::string& end) const;
  // A write (`issue` hands it to storage): its keys in flight until done,
  // then applied to what is cached.
  void Write(WriteBatch batch, WriteDone done, const std::function<void(WriteBatch, WriteDone)>& issue);
  void StartFill(std::string begin, std::string end, ScanDone done);
  void FinishFill(uint64_t fill_id, const std::vector<KeyValue>& stored);
  // Forgets the done writes that no running fill started before.
  void ForgetWritesBeforeFills();
  void ApplyDone(const WriteBatch& batch);
  void Install(const std::string& begin, const std::string& end, std::map<std::string, std::string> entries);
  void Evict(std::map<std::string, Range>::iterator range);
  // Serves every range from memory (later, through the reactor) if every
  // one is cached; false if one is not.
  bool ServedFromMemory(const std::vector<ScanRange>& ranges, const ScanRangesDone& done);
  // What the cached `range` holds of [begin, end), at most `limit` keys.
  std::vector<KeyValue> FromMemory(std::map<std::string, Range>::iterator range, const std::string& begin,
                                   const std::string& end, size_t limit);
  void ServeFromMemory(std::map<std::string, Range>::iterator range, const std::string& begin,
                       const std::string& end, size_t limit, ScanDone done);

  Storage& storage_;
  Reactor& reactor_;
  const size_t capacity_bytes_;
  const Cacheable cacheable_;
  ShardMetrics& metrics_;
  Buggify& buggify_;
  Probes* probes_;

  // Disjoint cached ranges by first key, and the entries inside them.
  std::map<std::string, Range> ranges_;
  std::map<std::string, std::string> entries_;
  // First keys of ranges_, most recently used first.
  std::list<std::string> recency_;
  size_t bytes_ = 0;
  // Keys of the writes issued and not yet done (one per operation).
  std::multiset<std::string> keys_in_flight_;
  std::map<uint64_t, Fill> fills_;  // by id: the oldest first
  uint64_t last_fill_id_ = 0;
  // Writes done while fills run, the last per key: a fill applies those
  // done after it started on top of what it read. One lookup per written
  // key, however many fills run (a Paxos prepare of a round of 1000 rows
  // starts 1000 fills).
  std::map<std::string, DoneWrite> writes_during_fills_;
  std::deque<std::pair<uint64_t, std::string>> write_order_;  // (sequence, key), oldest first
  uint64_t last_write_sequence_ = 0;
};

}  // namespace charybdis
