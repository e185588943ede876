#include "sim/sim_storage.h"

#include <gtest/gtest.h>

namespace charybdis::sim {
namespace {

scenario::StorageProfile Profile() {
  scenario::StorageProfile profile;
  profile.mutable_read()->set_min_us(10);
  profile.mutable_write()->set_min_us(5);
  profile.mutable_write()->set_jitter_mean_us(20);
  profile.mutable_sync()->set_min_us(100);
  return profile;
}

class SimStorageTest : public ::testing::Test {
 protected:
  void RunAll() {
    while (!simulator_.empty()) simulator_.Step();
  }
  void Put(SimStorage& storage, const std::string& key, Durability durability,
           absl::Status* status = nullptr) {
    WriteBatch batch;
    batch.Put(key, "v-" + key);
    storage.Apply(std::move(batch), durability, [status](absl::Status s) {
      if (status != nullptr) *status = s;
    });
  }

  Simulator simulator_;
  uint32_t host_ = simulator_.AddHost();
};

TEST_F(SimStorageTest, SyncedWritesSurviveACrashWithEverythingBeforeThem) {
  SimStorage storage(simulator_, host_, 0, Random(1), Profile());
  Put(storage, "a", Durability::kUnsynced);
  Put(storage, "b", Durability::kSynced);
  RunAll();
  storage.Crash();
  EXPECT_EQ(storage.contents().size(), 2u);
}

TEST_F(SimStorageTest, ACrashKeepsOnlyAPrefixOfUnsyncedWrites) {
  int lost_something = 0;
  for (uint64_t seed = 1; seed <= 50; seed++) {
    SimStorage storage(simulator_, host_, 0, Random(seed), Profile());
    Put(storage, "0", Durability::kSynced);
    for (char c = '1'; c <= '5'; c++) Put(storage, std::string(1, c), Durability::kUnsynced);
    RunAll();
    ASSERT_EQ(storage.contents().size(), 6u);
    storage.Crash();
    // Whatever survived is the durable write plus writes 1..k, no gaps.
    const size_t kept = storage.contents().size();
    ASSERT_GE(kept, 1u);
    for (size_t i = 0; i < kept; i++) {
      EXPECT_TRUE(storage.contents().count(std::to_string(i))) << "seed " << seed;
    }
    lost_something += kept < 6;
  }
  EXPECT_GT(lost_something, 0);
}

TEST_F(SimStorageTest, FailedWritesReportErrorsAndChangeNothing) {
  SimStorage storage(simulator_, host_, 0, Random(1), Profile());
  storage.set_faults(DiskFaults{false, true, 0});
  absl::Status status;
  Put(storage, "a", Durability::kSynced, &status);
  RunAll();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(storage.contents().empty());

  storage.set_faults(DiskFaults{true, false, 0});
  absl::StatusOr<std::optional<std::string>> read;
  storage.Get("a", [&](auto result) { read = result; });
  RunAll();
  EXPECT_FALSE(read.ok());
}

TEST_F(SimStorageTest, OperationsCompleteInOrderAfterTheirLatency) {
  SimStorage storage(simulator_, host_, 0, Random(3), Profile());
  std::vector<std::string> order;
  std::vector<Nanos> times;
  for (int i = 0; i < 20; i++) {
    WriteBatch batch;
    batch.Put("k", std::to_string(i));
    storage.Apply(std::move(batch), Durability::kUnsynced, [&, i](absl::Status) {
      order.push_back(std::to_string(i));
      times.push_back(simulator_.now());
    });
  }
  absl::StatusOr<std::optional<std::string>> read;
  storage.Get("k", [&](auto result) { read = result; });
  RunAll();
  ASSERT_EQ(order.size(), 20u);
  for (int i = 0; i < 20; i++) EXPECT_EQ(order[i], std::to_string(i));
  EXPECT_GE(times.front(), 5 * kMicrosecond);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(**read, "19");  // the read queued behind every write
}

TEST_F(SimStorageTest, ScanHonoursBoundsAndLimit) {
  SimStorage storage(simulator_, host_, 0, Random(1), Profile());
  for (const char* key : {"a", "b", "c", "d"}) Put(storage, key, Durability::kUnsynced);
  WriteBatch remove;
  remove.Delete("c");
  storage.Apply(std::move(remove), Durability::kUnsynced, [](absl::Status) {});
  std::vector<KeyValue> rows, limited;
  storage.Scan("b", "", 10, [&](auto result) { rows = *result; });
  storage.Scan("a", "d", 1, [&](auto result) { limited = *result; });
  RunAll();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].key, "b");
  EXPECT_EQ(rows[1].key, "d");
  ASSERT_EQ(limited.size(), 1u);
  EXPECT_EQ(limited[0], (KeyValue{"a", "v-a"}));
}

TEST_F(SimStorageTest, CompletionsOfACrashedLifeNeverRun) {
  SimStorage storage(simulator_, host_, 0, Random(1), Profile());
  bool called = false;
  WriteBatch batch;
  batch.Put("a", "1");
  storage.Apply(std::move(batch), Durability::kSynced, [&](absl::Status) { called = true; });
  simulator_.Crash(host_);
  storage.Crash(CrashKind::kPowerCut);
  RunAll();
  EXPECT_FALSE(called);
  EXPECT_TRUE(storage.contents().empty());  // never durable, and the power went
}

TEST_F(SimStorageTest, APowerCutLosesEveryUnsyncedWrite) {
  for (uint64_t seed = 1; seed <= 20; seed++) {
    SimStorage storage(simulator_, host_, 0, Random(seed), Profile());
    Put(storage, "0", Durability::kSynced);
    for (char c = '1'; c <= '5'; c++) Put(storage, std::string(1, c), Durability::kUnsynced);
    RunAll();
    Put(storage, "6", Durability::kUnsynced);  // issued, not finished
    storage.Crash(CrashKind::kPowerCut);
    ASSERT_EQ(storage.contents().size(), 1u) << "seed " << seed;
    EXPECT_TRUE(storage.contents().count("0"));
    EXPECT_EQ(storage.stats().batches_lost_in_crashes, 6u);
    simulator_.Crash(host_);
    RunAll();
  }
}

TEST_F(SimStorageTest, ACrashMayKeepWritesIssuedButNotFinishedInOrder) {
  int kept_unfinished = 0;
  int lost_unfinished = 0;
  for (uint64_t seed = 1; seed <= 60; seed++) {
    SimStorage storage(simulator_, host_, 0, Random(seed), Profile());
    Put(storage, "0", Durability::kUnsynced);
    RunAll();
    bool called = false;
    WriteBatch batch;
    batch.Put("1", "v");
    storage.Apply(std::move(batch), Durability::kSynced, [&](absl::Status) { called = true; });
    storage.set_faults(DiskFaults{false, true, 0});
    Put(storage, "never", Durability::kSynced);  // fails: never reaches the disk
    storage.set_faults(DiskFaults{});
    storage.Crash();
    simulator_.Crash(host_);
    RunAll();
    EXPECT_FALSE(called);
    EXPECT_FALSE(storage.contents().count("never"));
    // A prefix of (0, 1): 1 without 0 would be a gap.
    if (storage.contents().count("1")) {
      EXPECT_TRUE(storage.contents().count("0")) << "seed " << seed;
      kept_unfinished++;
    } else {
      lost_unfinished++;
    }
  }
  EXPECT_GT(kept_unfinished, 0);
  EXPECT_GT(lost_unfinished, 0);
}

TEST_F(SimStorageTest, MomentsReachTheObserverAndAFiringOneSilencesTheCaller) {
  SimStorage storage(simulator_, host_, 0, Random(1), Profile());
  std::vector<StorageMoment> moments;
  storage.set_moment_observer([&](StorageMoment moment) {
    moments.push_back(moment);
    return moment == StorageMoment::kSyncDurable;  // "crash" as it becomes durable
  });
  bool called = false;
  Put(storage, "u", Durability::kUnsynced);
  WriteBatch batch;
  batch.Put("s", "v");
  storage.Apply(std::move(batch), Durability::kSynced, [&](absl::Status) { called = true; });
  RunAll();
  ASSERT_EQ(moments.size(), 2u);
  EXPECT_EQ(moments[0], StorageMoment::kSyncIssued);
  EXPECT_EQ(moments[1], StorageMoment::kSyncDurable);
  EXPECT_FALSE(called);
  storage.Crash(CrashKind::kPowerCut);
  EXPECT_TRUE(storage.contents().count("s"));  // durable although nobody heard
}

DiskFaults Corruption(double corrupt_read, double misdirect_write, bool torn) {
  DiskFaults faults;
  faults.corrupt_read_probability = corrupt_read;
  faults.misdirect_write_probability = misdirect_write;
  faults.torn_writes = torn;
  return faults;
}

TEST_F(SimStorageTest, ACorruptReadFlipsOneBitForGood) {
  SimStorage storage(simulator_, host_, 0, Random(1), Profile());
  Put(storage, "a", Durability::kSynced);
  RunAll();
  storage.set_faults(Corruption(1, 0, false));
  absl::StatusOr<std::optional<std::string>> read;
  storage.Get("a", [&](auto result) { read = result; });
  RunAll();
  ASSERT_TRUE(read.ok() && read->has_value());
  ASSERT_EQ((*read)->size(), 3u);
  int flipped_bits = 0;
  for (size_t i = 0; i < 3; i++) {
    flipped_bits += __builtin_popcount(static_cast<unsigned char>((**read)[i] ^ "v-a"[i]));
  }
  EXPECT_EQ(flipped_bits, 1);
  EXPECT_EQ(storage.contents().at("a"), **read);  // a latent error, not a glitch of one read
  EXPECT_EQ(storage.stats().corrupted_reads, 1u);
}

TEST_F(SimStorageTest, AMisdirectedPutOverwritesTheNextKeyAndMissesItsOwn) {
  SimStorage storage(simulator_, host_, 0, Random(1), Profile());
  Put(storage, "b", Durability::kSynced);
  RunAll();
  storage.set_faults(Corruption(0, 1, false));
  absl::Status status = absl::UnknownError("not done");
  Put(storage, "a", Durability::kSynced, &status);
  RunAll();
  EXPECT_TRUE(status.ok());  // nobody can tell
  EXPECT_FALSE(storage.contents().count("a"));
  EXPECT_EQ(storage.contents().at("b"), "v-a");
  EXPECT_EQ(storage.stats().misdirected_puts, 1u);
}

TEST_F(SimStorageTest, ACrashTearsTheLastWriteItKeepsAndNeverADurableOne) {
  int torn = 0;
  for (uint64_t seed = 1; seed <= 50; seed++) {
    SimStorage storage(simulator_, host_, 0, Random(seed), Profile());
    Put(storage, "0", Durability::kSynced);
    for (char c = '1'; c <= '3'; c++) Put(storage, std::string(1, c), Durability::kUnsynced);
    RunAll();
    storage.set_faults(Corruption(0, 0, true));
    storage.Crash();
    EXPECT_EQ(storage.contents().at("0"), "v-0") << "seed " << seed;
    const size_t kept = storage.contents().size();
    for (size_t i = 1; i < kept; i++) {
      const std::string key = std::to_string(i);
      const std::string& value = storage.contents().at(key);
      if (i + 1 < kept) {
        EXPECT_EQ(value, "v-" + key) << "seed " << seed;
      } else {
        EXPECT_LT(value.size(), 3u) << "seed " << seed;  // the last one kept
        EXPECT_EQ(value, std::string("v-" + key).substr(0, value.size()));
        torn++;
      }
    }
  }
  EXPECT_GT(torn, 0);
}

TEST_F(SimStorageTest, APowerCutKeepsNothingToTear) {
  SimStorage storage(simulator_, host_, 0, Random(1), Profile());
  Put(storage, "0", Durability::kSynced);
  Put(storage, "1", Durability::kUnsynced);
  RunAll();
  storage.set_faults(Corruption(0, 0, true));
  storage.Crash(CrashKind::kPowerCut);
  EXPECT_EQ(storage.contents(), (SimStorage::Contents{{"0", "v-0"}}));
  EXPECT_EQ(storage.stats().torn_writes, 0u);
}

// A synced write, recording when its callback ran.
void TimedPut(SimStorage& storage, Simulator& simulator, const std::string& key,
              Durability durability, std::vector<Nanos>& done_at) {
  WriteBatch batch;
  batch.Put(key, "v");
  storage.Apply(std::move(batch), durability, [&simulator, &done_at](absl::Status status) {
    EXPECT_TRUE(status.ok());
    done_at.push_back(simulator.now());
  });
}

TEST_F(SimStorageTest, SyncedWritesQueuedDuringAnFsyncShareTheNextOne) {
  SimStorage storage(simulator_, host_, 0, Random(5), Profile());
  std::vector<Nanos> done_at;
  // The first starts a group at once; the next three queue behind it and
  // go together.
  for (const char* key : {"a", "b", "c", "d"}) TimedPut(storage, simulator_, key, Durability::kSynced, done_at);
  RunAll();
  ASSERT_EQ(done_at.size(), 4u);
  EXPECT_GE(done_at[0], 105 * kMicrosecond);  // a write and an fsync
  EXPECT_EQ(done_at[1], done_at[3]) << "one group";
  EXPECT_GE(done_at[1] - done_at[0], 105 * kMicrosecond) << "its own fsync, after the first";
  EXPECT_EQ(storage.stats().synced_writes, 4u);
  EXPECT_EQ(storage.stats().syncs, 2u);
  storage.Crash(CrashKind::kPowerCut);
  EXPECT_EQ(storage.contents().size(), 4u);
}

TEST_F(SimStorageTest, ReadsNeitherWaitForAnFsyncNorSeeWhatItHasNotMadeDurable) {
  SimStorage storage(simulator_, host_, 0, Random(5), Profile());
  std::vector<Nanos> done_at;
  TimedPut(storage, simulator_, "a", Durability::kSynced, done_at);
  absl::StatusOr<std::optional<std::string>> read;
  Nanos read_at = 0;
  storage.Get("a", [&](auto result) {
    read = result;
    read_at = simulator_.now();
  });
  RunAll();
  ASSERT_EQ(done_at.size(), 1u);
  EXPECT_LT(read_at, done_at[0]);
  ASSERT_TRUE(read.ok());
  EXPECT_FALSE(read->has_value()) << "not visible before it is durable";
}

TEST_F(SimStorageTest, AnUnsyncedWriteBehindASyncedOneKeepsItsPlace) {
  SimStorage storage(simulator_, host_, 0, Random(5), Profile());
  std::vector<Nanos> done_at;
  TimedPut(storage, simulator_, "a", Durability::kSynced, done_at);
  TimedPut(storage, simulator_, "b", Durability::kUnsynced, done_at);
  RunAll();
  ASSERT_EQ(done_at.size(), 2u);
  EXPECT_GE(done_at[1], done_at[0]);
  EXPECT_EQ(storage.stats().syncs, 1u) << "the unsynced write's group needs no fsync";
}

TEST_F(SimStorageTest, PeriodicModeAnswersAtOnceAndAPowerCutLosesWhatFollowsTheLastTick) {
  scenario::StorageProfile profile = Profile();
  profile.mutable_commitlog_sync()->set_mode(CommitlogSync::PERIODIC);
  profile.mutable_commitlog_sync()->set_period_ms(1000);
  SimStorage storage(simulator_, host_, 0, Random(5), profile);
  std::vector<Nanos> done_at;
  TimedPut(storage, simulator_, "a", Durability::kSynced, done_at);
  RunAll();
  ASSERT_EQ(done_at.size(), 1u);
  EXPECT_LT(done_at[0], 100 * kMicrosecond) << "no fsync before the answer";
  simulator_.RunUntil(2500 * kMillisecond);  // at least one tick since
  TimedPut(storage, simulator_, "b", Durability::kSynced, done_at);
  RunAll();
  ASSERT_EQ(done_at.size(), 2u);
  storage.Crash(CrashKind::kPowerCut);
  EXPECT_TRUE(storage.contents().count("a")) << "a tick made it durable";
  EXPECT_FALSE(storage.contents().count("b")) << "acknowledged, and lost";
  EXPECT_EQ(storage.stats().synced_writes, 2u);
}

// An ingestion (a stream's SST file on real nodes) lands all at once and
// durable, off the log writer's queue; a crash before it lands keeps
// nothing of it, and a crash after never takes its keys back, even those
// an earlier unsynced write had touched.
TEST_F(SimStorageTest, AnIngestionLandsWholeAndDurableAndACrashBeforeKeepsNothing) {
  SimStorage storage(simulator_, host_, 0, Random(3), Profile());
  WriteBatch puts;
  puts.Put("i1", "x");
  puts.Put("i2", "y");
  bool landed = false;
  storage.Ingest(puts, [&landed](absl::Status status) { landed = status.ok(); });
  simulator_.Crash(host_);
  storage.Crash(CrashKind::kPowerCut);
  RunAll();
  EXPECT_FALSE(landed);
  EXPECT_TRUE(storage.contents().empty()) << "a crash kept part of an ingestion that had not landed";

  Put(storage, "i1", Durability::kUnsynced);  // unsynced, before the ingestion
  RunAll();
  storage.Ingest(puts, [&landed](absl::Status status) { landed = status.ok(); });
  RunAll();
  ASSERT_TRUE(landed);
  EXPECT_EQ(storage.contents().at("i1"), "x");
  storage.Crash(CrashKind::kPowerCut);
  EXPECT_EQ(storage.contents().count("i1"), 1u) << "a power cut took back an ingested key";
  EXPECT_EQ(storage.contents().count("i2"), 1u);
  EXPECT_EQ(storage.stats().ingestions, 1u);
}

}  // namespace
}  // namespace charybdis::sim
