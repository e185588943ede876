#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "core/env/random.h"
#include "core/env/storage.h"
#include "proto/scenario.pb.h"
#include "sim/simulator.h"

namespace charybdis::sim {

struct DiskFaults {
  bool fail_reads = false;
  bool fail_writes = false;
  Nanos extra_latency = 0;
  // Corruption, after TigerBeetle's storage faults. Each read flips one bit
  // of one stored version it returns, for good, with this probability (a
  // latent sector error found when read).
  double corrupt_read_probability = 0;
  // Each put of a finished write lands on the next stored key instead of
  // its own with this probability: its own key is not written, and the
  // other key's value is overwritten (a misdirected write).
  double misdirect_write_probability = 0;
  // A crash (not a power cut) tears the last not yet durable write it
  // keeps: that write's last put keeps only a prefix of its bytes.
  bool torn_writes = false;
};

struct StorageStats {
  uint64_t writes = 0;
  uint64_t synced_writes = 0;
  // fsyncs: one per group of synced writes (group commit).
  uint64_t syncs = 0;
  uint64_t reads = 0;
  uint64_t failed = 0;
  // Writes not yet durable (applied unsynced, or issued and unfinished)
  // that a crash took back, and issued writes it kept.
  uint64_t batches_lost_in_crashes = 0;
  uint64_t issued_batches_kept_in_crashes = 0;
  // Corruption injected (DiskFaults).
  uint64_t corrupted_reads = 0;
  uint64_t misdirected_puts = 0;
  uint64_t torn_writes = 0;
  uint64_t ingestions = 0;
  uint64_t compactions = 0;

  // Each counter by its report name.
  std::vector<std::pair<const char*, uint64_t>> Counters() const {
    return {{"writes", writes},
            {"synced_writes", synced_writes},
            {"syncs", syncs},
            {"reads", reads},
            {"failed", failed},
            {"batches_lost_in_crashes", batches_lost_in_crashes},
            {"issued_batches_kept_in_crashes", issued_batches_kept_in_crashes},
            {"corrupted_reads", corrupted_reads},
            {"misdirected_puts", misdirected_puts},
            {"torn_writes", torn_writes},
            {"ingestions", ingestions},
            {"compactions", compactions}};
  }
};

enum class CrashKind {
  // The process dies; the OS may already have written back any prefix of
  // what was not synced, including writes issued but not finished.
  kCrash,
  // The power goes: only what a finished synced write made durable stays.
  kPowerCut,
};

// The moments of a disk that a crash point can wait for.
enum class StorageMoment {
  kSyncIssued,   // a synced write was issued (not durable yet)
  kSyncDurable,  // a synced write is durable; its caller has not heard
};

// One shard's disk, in memory, in the spirit of LevelDB's fault-injection
// env: it outlives crashes of its node and forgets, on a crash, what no
// finished synced write made durable: a random suffix of it, or all of it
// in a power cut. Operations complete in order (one queue per disk) after a
// drawn latency.
//
// It has the shape of node/server/rocksdb_storage.cc (docs/durability.md). In
// GROUP mode synced writes, and writes issued behind them, go to a log
// writer: every write queued while a group is being written and fsync'd
// goes into the next group, which costs one write and one sync latency for
// all of them and becomes visible and durable at once. Other writes are
// visible after a write latency and durable with the next sync. In
// PERIODIC mode a synced write is answered like an unsynced one, and
// everything written is durable at the disk's sync ticks, every period_ms.
class SimStorage final : public Storage {
 public:
  SimStorage(Simulator& simulator, uint32_t host, uint32_t shard, Random random,
             scenario::StorageProfile profile);

  void Apply(WriteBatch batch, Durability durability, WriteDone done) override;
  void Get(std::string key, GetDone done) override;
  void Scan(std::string begin, std::string end, size_t limit, ScanDone done) override;
  // One read of every range when it completes, as one Scan.
  void ScanRanges(std::vector<ScanRange> ranges, ScanRangesDone done) override;
  // As RocksDB ingests an SST on real nodes (node/server/storage_worker.h):
  // off the log writer and the disk's queue, one at a time, one write and
  // one sync latency each, then durable all at once; a crash before that
  // keeps nothing of it.
  void Ingest(WriteBatch puts, WriteDone done) override;
  // As a full compaction on real nodes: on the same worker as ingestions,
  // one write and one sync latency; keys here take no space once deleted,
  // so it changes nothing else.
  void Compact(WriteDone done) override;

  // The node crashed: its in-flight operations are gone (their completions
  // were bound to the dead incarnation) and so is part or all of the data
  // not yet durable.
  void Crash(CrashKind kind = CrashKind::kCrash);

  // Told of each moment; returns true when the node crashes right there
  // (then a durable write's caller is never told).
  using MomentObserver = std::function<bool(StorageMoment)>;
  void set_moment_observer(MomentObserver observer) { moment_observer_ = std::move(observer); }

  void set_faults(DiskFaults faults) { faults_ = faults; }
  const StorageStats& stats() const { return stats_; }
  // Writes synced one by one (not under PERIODIC), by what they hold (StoredKindOf; a batch
  // counts once for each kind among its keys).
  const std::map<std::string, uint64_t>& synced_writes_by_kind() const { return synced_writes_by_kind_; }
  // What a reader sees now (for checkers and tests).
  using Contents = std::map<std::string, std::string>;
  const Contents& contents() const { return contents_; }

 private:
  // Now plus a drawn latency, and no earlier than the previous completion.
  Nanos CompletionTime(const scenario::Latency& latency);
  void Complete(Nanos at, uint64_t detail, std::function<void()> fn);
  // When a job given to the storage worker now is done.
  Nanos WorkerJobDone();
  // Previous values of the keys one unsynced batch touched, in order.
  using Undo = std::vector<std::pair<std::string, std::optional<std::string>>>;

  // Applies the batch; with `undo`, records how to take it back.
  void ApplyBatch(const WriteBatch& batch, Undo* undo);
  void FinishWrite(uint64_t write_id, WriteDone done);
  // Lands the oldest issued write (it must be `write_id`): durable, or
  // unsynced with an undo record. A failing write lands nowhere.
  absl::Status Land(uint64_t write_id, bool durable);
  // Lands an ingestion: durable, and no crash's rollback of an earlier
  // unsynced write takes its keys back (RocksDB flushes a memtable that
  // overlaps an ingested file first, and the file is newer).
  absl::Status LandIngestion(const WriteBatch& puts, bool fails);
  // The log writer (GROUP): writes what is queued as one group.
  void StartGroup();
  void FinishGroup();
  // PERIODIC: makes durable what the sync ticks up to now covered.
  void ApplyPeriodicSyncs();
  // Takes back the unsynced batches after the first `keep`.
  void RollBackUnsyncedAfter(size_t keep);
  // The corruption faults (DiskFaults).
  void Misdirect(WriteBatch& batch);
  void PerhapsCorrupt(const std::string& key, std::string& returned);
  // The keys of [begin, end), at most `limit`, as they are now.
  std::vector<KeyValue> Read(const std::string& begin, const std::string& end, size_t limit) const;
  void Tear(const std::string& key);
  bool Observe(StorageMoment moment) { return moment_observer_ && moment_observer_(moment); }

  // A write issued and not finished: the OS may have it (a crash can keep
  // it) though nobody was told it is done.
  struct IssuedWrite {
    uint64_t id = 0;
    WriteBatch batch;
    bool synced = false;  // asked for (PERIODIC answers it unsynced)
    bool fails = false;  // a disk fault: it never reaches the disk
  };

  // A write with the log writer (GROUP), queued or in the running group.
  struct LoggedWrite {
    uint64_t id = 0;
    bool synced = false;
    WriteDone done;
  };

  Simulator& simulator_;
  uint32_t host_;
  uint32_t shard_;
  Random random_;
  scenario::StorageProfile profile_;
  DiskFaults faults_;
  StorageStats stats_;
  Nanos last_completion_ = 0;
  Nanos worker_free_at_ = 0;  // when the storage worker is done with what it was given

  // What a reader sees. Unsynced batches are applied here too, each with an
  // undo record (the previous value of every key it touched), so a crash
  // can take back a suffix of them.
  Contents contents_;
  std::vector<Undo> unsynced_;  // in the order the batches were applied
  // The last put of each unsynced batch (what a torn write tears), or "".
  std::vector<std::string> unsynced_last_puts_;
  std::vector<Nanos> unsynced_at_;  // when each was applied (PERIODIC)
  std::deque<IssuedWrite> issued_;  // in issue (= completion) order
  std::map<std::string, uint64_t> synced_writes_by_kind_;
  uint64_t last_write_id_ = 0;
  // The log writer: the group being written, and the writes queued for
  // the next one (always the newest of issued_).
  bool group_running_ = false;
  std::vector<LoggedWrite> group_;
  std::vector<LoggedWrite> log_queue_;
  // PERIODIC: the sync ticks fall at periodic_phase_ + k * sync_period_.
  Nanos sync_period_ = 0;
  Nanos periodic_phase_ = 0;
  MomentObserver moment_observer_;
};

}  // namespace charybdis::sim
