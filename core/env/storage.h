#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace charybdis {

struct KeyValue {
  std::string key;
  std::string value;

  bool operator==(const KeyValue&) const = default;
};

// Puts and deletes applied atomically, in order.
struct WriteBatch {
  struct Operation {
    std::string key;
    std::optional<std::string> value;  // nullopt deletes the key
  };
  std::vector<Operation> operations;

  void Put(std::string key, std::string value) {
    operations.push_back({std::move(key), std::move(value)});
  }
  void Delete(std::string key) {
    operations.push_back({std::move(key), std::nullopt});
  }
};

// One range of keys a ScanRanges reads: [begin, end) (an empty `end`: no
// upper bound), at most `limit` keys of it.
struct ScanRange {
  std::string begin;
  std::string end;
  size_t limit = SIZE_MAX;
};

enum class Durability {
  // Visible at once, may be lost by a crash until a later synced write.
  kUnsynced,
  // Durable, together with every earlier write, when the callback runs OK.
  kSynced,
};

// An ordered key-value engine (byte-wise key order) owned by one shard.
// Every call completes through its callback on the shard's reactor; a
// failed write has no effect.
class Storage {
 public:
  using WriteDone = std::function<void(absl::Status)>;
  using GetDone = std::function<void(absl::StatusOr<std::optional<std::string>>)>;
  using ScanDone = std::function<void(absl::StatusOr<std::vector<KeyValue>>)>;
  using ScanRangesDone = std::function<void(absl::StatusOr<std::vector<std::vector<KeyValue>>>)>;

  virtual ~Storage() = default;
  virtual void Apply(WriteBatch batch, Durability durability, WriteDone done) = 0;
  virtual void Get(std::string key, GetDone done) = 0;
  // Keys in [begin, end) in order, at most `limit` of them, and fewer only
  // when the range holds no more. An empty `end` means no upper bound.
  virtual void Scan(std::string begin, std::string end, size_t limit,
                    ScanDone done) = 0;
  // Each range as Scan reads it, one answer per range in their order, all
  // from one snapshot of the store: every write lands before all of them
  // or after all. A partition's range tombstones and a slice of its rows
  // sort apart, and two Scans could show half of a mutation that holds
  // both (a BATCH of a range DELETE and an INSERT).
  virtual void ScanRanges(std::vector<ScanRange> ranges, ScanRangesDone done) = 0;
  // Stores `puts` (puts only, keys ascending and distinct) durably and all
  // at once, as a bulk load: on real nodes an SST file ingested into
  // RocksDB, off the log writer, so client writes never queue behind it.
  // It lands in no order with other writes, so it is only for keys no
  // other write gives another value: streamed stored pairs, whose keys are
  // versions (docs/topology.md, "What a stream carries"). A storage
  // without a bulk path stores them as one synced batch.
  virtual void Ingest(WriteBatch puts, WriteDone done) {
    Apply(std::move(puts), Durability::kSynced, std::move(done));
  }
  // Gives back the space of deleted and overwritten keys (after a purge,
  // docs/repair.md): on real nodes a full RocksDB compaction, off the
  // shard's thread and its log writer. Changes nothing a read sees.
  virtual void Compact(WriteDone done) = 0;
};

}  // namespace charybdis
