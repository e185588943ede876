#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "core/random.h"
#include "core/storage.h"
#include "proto/scenario.pb.h"
#include "sim/simulator.h"

namespace charybdis::sim {

struct DiskFaults {
  bool fail_reads = false;
  bool fail_writes = false;
  Nanos extra_latency = 0;
};

struct StorageStats {
  uint64_t writes = 0;
  uint64_t synced_writes = 0;
  uint64_t reads = 0;
  uint64_t failed = 0;
  uint64_t batches_lost_in_crashes = 0;
};

// One shard's disk, in memory, in the spirit of LevelDB's fault-injection
// env: it outlives crashes of its node and forgets, on a crash, a random
// suffix of the writes that no synced write has made durable yet.
// Operations complete in order (one queue per disk) after a drawn latency.
class SimStorage final : public Storage {
 public:
  SimStorage(Simulator& simulator, uint32_t host, uint32_t shard, Random random,
             scenario::StorageProfile profile);

  void Apply(WriteBatch batch, Durability durability, WriteDone done) override;
  void Get(std::string key, GetDone done) override;
  void Scan(std::string begin, std::string end, size_t limit, ScanDone done) override;

  // The node crashed: its in-flight operations are gone (their completions
  // were bound to the dead incarnation) and so is part of its unsynced data.
  void Crash();

  void set_faults(DiskFaults faults) { faults_ = faults; }
  const StorageStats& stats() const { return stats_; }
  // What a reader sees now (for checkers and tests).
  using Contents = std::map<std::string, std::string>;
  const Contents& contents() const { return contents_; }

 private:
  Nanos CompletionTime(const scenario::Latency& latency, Nanos extra);
  void Complete(Nanos at, uint64_t detail, std::function<void()> fn);
  // Previous values of the keys one unsynced batch touched, in order.
  using Undo = std::vector<std::pair<std::string, std::optional<std::string>>>;

  // Applies the batch; with `undo`, records how to take it back.
  void ApplyBatch(const WriteBatch& batch, Undo* undo);

  Simulator& simulator_;
  uint32_t host_;
  uint32_t shard_;
  Random random_;
  scenario::StorageProfile profile_;
  DiskFaults faults_;
  StorageStats stats_;
  Nanos last_completion_ = 0;

  // What a reader sees. Unsynced batches are applied here too, each with an
  // undo record (the previous value of every key it touched), so a crash
  // can take back a suffix of them.
  Contents contents_;
  std::vector<Undo> unsynced_;  // in the order the batches were applied
};

}  // namespace charybdis::sim
