// The real-node benchmark's own logic, on in-memory systems: its loops
// stay within their bounds, its checks catch a system that breaks a
// promise, and its comparisons carry the goals of docs/benchmarks.md.
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "node/bench/bench_load.h"
#include "node/bench/bench_phases.h"
#include "node/bench/bench_report.h"

namespace charybdis::node {
namespace {

Outcome Answered(bool ok = true, bool applied = false) {
  Outcome outcome;
  outcome.ok = ok;
  outcome.applied = applied;
  return outcome;
}

// A linearizable key-value store in memory; `lose_conditions` makes its
// compare-and-set apply whatever the key holds.
class MemorySystem : public BenchSystem {
 public:
  explicit MemorySystem(std::string name, bool lose_conditions = false)
      : name_(std::move(name)), lose_conditions_(lose_conditions) {}
  const std::string& name() const override { return name_; }
  Outcome Put(const std::string& key, const std::string& value) override {
    std::lock_guard<std::mutex> lock(mutex_);
    data_[key] = value;
    return Answered();
  }
  Outcome Get(const std::string& key) override {
    std::lock_guard<std::mutex> lock(mutex_);
    Outcome outcome = Answered();
    if (auto found = data_.find(key); found != data_.end()) outcome.value = found->second;
    return outcome;
  }
  Outcome SerialGet(const std::string& key) override { return Get(key); }
  Outcome CompareAndSet(const std::string& key, const std::optional<std::string>& expected,
                        const std::string& value) override {
    // Read and write apart, so that racing clients interleave.
    std::optional<std::string> current = Get(key).value;
    std::this_thread::yield();
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto found = data_.find(key); found != data_.end()) current = found->second;
    else current.reset();
    Outcome outcome = Answered();
    if (current == expected || lose_conditions_) {
      data_[key] = value;
      outcome.applied = true;
    }
    return outcome;
  }
  Outcome InsertIfNotExists(const std::string& partition, const std::vector<std::string>& clustering_keys,
                            const std::string& value) override {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const std::string& key : clustering_keys) {
      if (data_.count(partition + "/" + key)) return Answered(true, false);
    }
    for (const std::string& key : clustering_keys) data_[partition + "/" + key] = value;
    return Answered(true, true);
  }

 private:
  const std::string name_;
  const bool lose_conditions_;
  std::mutex mutex_;
  std::map<std::string, std::string> data_;
};

uint64_t CheckFailures(const std::vector<PhaseRun>& runs, const std::string& system) {
  uint64_t failures = 0;
  for (const PhaseRun& run : runs) {
    if (run.system != system) continue;
    for (const auto& [kind, count] : run.result.errors) failures += IsCheckFailure(kind) ? count : 0;
  }
  return failures;
}

TEST(RunLoad, IssuesEachRequestOnceUpToTheCount) {
  std::mutex mutex;
  std::multiset<uint64_t> issued;
  LoadOptions options;
  options.clients = 4;
  options.max_requests = 500;
  const LoadResult result = RunLoad(options, [&](uint32_t, uint64_t i) {
    std::lock_guard<std::mutex> lock(mutex);
    issued.insert(i);
    return Answered(true, i % 2 == 0);
  });
  EXPECT_EQ(result.requests, 500u);
  EXPECT_EQ(result.ok, 500u);
  EXPECT_EQ(result.applied, 250u);
  EXPECT_EQ(result.latencies_us.size(), 500u);
  ASSERT_EQ(issued.size(), 500u);
  EXPECT_EQ(*issued.begin(), 0u);
  EXPECT_EQ(*issued.rbegin(), 499u);
  EXPECT_EQ(std::set<uint64_t>(issued.begin(), issued.end()).size(), 500u);
}

TEST(RunLoad, StopsAtItsDurationAndCountsErrorsByKind) {
  LoadOptions options;
  options.clients = 2;
  options.max_requests = 1'000'000;
  options.max_duration = std::chrono::milliseconds(200);
  const LoadResult result = RunLoad(options, [](uint32_t, uint64_t i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    Outcome outcome = Answered(i % 3 != 0);
    if (!outcome.ok) outcome.error = "WRITE_TIMEOUT";
    return outcome;
  });
  EXPECT_LT(result.requests, 100u);  // about 40
  EXPECT_GT(result.requests, 5u);
  EXPECT_EQ(result.errors.at("WRITE_TIMEOUT"), result.failed());
  EXPECT_LT(result.seconds, 1.0);
}

// Answers requests from a thread of its own, each after `delay`, as a
// client library's threads do.
class Answerer {
 public:
  explicit Answerer(std::chrono::milliseconds delay) : delay_(delay), thread_([this] { Loop(); }) {}
  ~Answerer() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  void Start(uint64_t i, OutcomeDone done) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      in_flight_++;
      most_in_flight_ = std::max(most_in_flight_, in_flight_);
      queue_.emplace_back(i, std::move(done));
    }
    wake_.notify_one();
  }
  uint64_t most_in_flight() {
    std::lock_guard<std::mutex> lock(mutex_);
    return most_in_flight_;
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      auto [i, done] = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      std::this_thread::sleep_for(delay_);
      lock.lock();
      in_flight_--;
      lock.unlock();
      Outcome outcome = Answered(i % 3 != 0, i % 2 == 0);
      if (!outcome.ok) outcome.error = "WRITE_TIMEOUT";
      done(outcome);
      lock.lock();
    }
  }

  const std::chrono::milliseconds delay_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::pair<uint64_t, OutcomeDone>> queue_;
  uint64_t in_flight_ = 0;
  uint64_t most_in_flight_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

TEST(RunAsyncLoad, KeepsItsClientsInFlightAndStartsEachRequestOnceUpToTheCount) {
  // Slower to answer than the load is to start: all 4 are out at once.
  Answerer answerer(std::chrono::milliseconds(1));
  std::mutex mutex;
  std::multiset<uint64_t> started;
  LoadOptions options;
  options.clients = 4;
  options.max_requests = 500;
  const LoadResult result = RunAsyncLoad(options, [&](uint64_t i, OutcomeDone done) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      started.insert(i);
    }
    answerer.Start(i, std::move(done));
  });
  EXPECT_EQ(result.requests, 500u);
  EXPECT_EQ(result.errors.at("WRITE_TIMEOUT"), result.failed());
  EXPECT_EQ(result.failed(), 167u);  // i % 3 == 0 for i < 500
  EXPECT_EQ(result.latencies_us.size(), result.ok);
  ASSERT_EQ(started.size(), 500u);
  EXPECT_EQ(std::set<uint64_t>(started.begin(), started.end()).size(), 500u);
  EXPECT_EQ(*started.rbegin(), 499u);
  // Never more than its clients at once, and it does keep them all going.
  EXPECT_EQ(answerer.most_in_flight(), 4u);
}

TEST(RunAsyncLoad, StopsAtItsDurationAndWaitsForWhatIsInFlight) {
  Answerer answerer(std::chrono::milliseconds(10));
  LoadOptions options;
  options.clients = 2;
  options.max_requests = 1'000'000;
  options.max_duration = std::chrono::milliseconds(200);
  uint64_t started = 0;  // the load's own thread only
  const LoadResult result = RunAsyncLoad(options, [&](uint64_t i, OutcomeDone done) {
    started++;
    answerer.Start(i, std::move(done));
  });
  EXPECT_LT(result.requests, 100u);  // about 20: one answerer, 10 ms each
  EXPECT_GT(result.requests, 5u);
  EXPECT_EQ(result.requests, started);  // every request started was counted
  EXPECT_LT(result.seconds, 1.0);
}

TEST(RunAsyncLoad, AnswersInsideTheCallRunOneAfterAnother) {
  // A system's default Start forms answer inside the call.
  MemorySystem system("memory");
  LoadOptions options;
  options.clients = 8;
  options.max_requests = 100'000;
  const LoadResult result = RunAsyncLoad(options, [&](uint64_t i, OutcomeDone done) {
    system.StartInsertIfNotExists("p", {absl::StrCat(i)}, "v", std::move(done));
  });
  EXPECT_EQ(result.ok, 100'000u);
  EXPECT_EQ(result.applied, 100'000u);
}

TEST(RunLockStep, ExactlyOneWriterPerRoundAppliesAndEveryoneStopsTogether) {
  MemorySystem system("charybdis");
  PhaseSizes sizes;
  sizes.contention_clients = {4};
  sizes.contention_attempts = 30;
  const std::vector<PhaseRun> runs = RunContention({&system}, sizes, "group, RF=3", "t");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].result.requests, 120u);
  EXPECT_EQ(runs[0].result.applied, 30u);  // everyone read the same value: one wins each round
  EXPECT_EQ(CheckFailures(runs, "charybdis"), 0u);

  // Out of time: all clients leave after the same round, none waits forever.
  const LoadResult timed = RunLockStep(
      3, 1'000'000, std::chrono::milliseconds(100),
      [](uint32_t, uint64_t) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        return Answered();
      },
      [](uint32_t, const Outcome&) { return Answered(true, true); });
  EXPECT_EQ(timed.requests % 3, 0u);
  EXPECT_LT(timed.requests, 300u);
}

TEST(Phases, AHonestSystemPassesEveryCheck) {
  MemorySystem ours("charybdis"), etcd("etcd");
  PhaseSizes sizes;
  sizes.sequential_puts = sizes.sequential_gets = 50;
  sizes.sequential_lwts = 20;
  sizes.contention_clients = {4};
  sizes.contention_attempts = 30;
  sizes.lwt_load_in_flight = 4;
  sizes.lwt_load_seconds = 1;
  sizes.lwt_load_batches = {1, 5};
  std::vector<PhaseRun> runs = RunSequential({&ours, &etcd}, sizes, "group, RF=3", "t");
  for (auto more : {RunContention({&ours, &etcd}, sizes, "group, RF=3", "t"),
                    RunLwtLoad({&ours, &etcd}, sizes, "group, RF=3", "t")}) {
    runs.insert(runs.end(), more.begin(), more.end());
  }
  ASSERT_EQ(runs.size(), 2u * (3 + 1 + 2));
  EXPECT_EQ(CheckFailures(runs, "charybdis"), 0u);
  EXPECT_EQ(CheckFailures(runs, "etcd"), 0u);
  EXPECT_EQ(runs[0].system, "charybdis");  // measure by measure, in turn
  EXPECT_EQ(runs[1].system, "etcd");
}

TEST(Phases, MemoryIsSampledAfterEachTenthAndComparedWithHalfway) {
  MemorySystem ours("charybdis");
  PhaseSizes sizes;
  sizes.in_flight = 4;
  sizes.memory_lwts = 100;
  // A node whose memory grows by 1 MiB per 10 LWTs, from 100 MiB.
  uint64_t calls = 0;
  std::vector<MemorySample> samples;
  const PhaseRun run = RunMemory(ours, sizes, "group, RF=3", "t", [&] { return (100 + ++calls) << 20; }, samples);
  EXPECT_EQ(run.result.ok, 100u);
  EXPECT_EQ(run.result.applied, 100u);  // every key was fresh
  ASSERT_EQ(samples.size(), 10u);
  EXPECT_EQ(samples[4].lwts, 50u);
  EXPECT_EQ(samples[9].lwts, 100u);
  const std::optional<Comparison> memory = MemoryComparison(samples, "group, RF=3");
  ASSERT_TRUE(memory.has_value());
  EXPECT_DOUBLE_EQ(memory->ours, 110);
  EXPECT_DOUBLE_EQ(memory->theirs, 105);  // after the fifth tenth
  EXPECT_TRUE(memory->met());             // 1.05 <= 1.2
  samples.back().resident_bytes = uint64_t{130} << 20;
  EXPECT_FALSE(MemoryComparison(samples, "group, RF=3")->met());
}

TEST(Phases, ContentionCatchesLostIncrementsAndGetsCatchLostPuts) {
  MemorySystem broken("charybdis", /*lose_conditions=*/true);
  PhaseSizes sizes;
  sizes.contention_clients = {8};
  sizes.contention_attempts = 50;
  const std::vector<PhaseRun> runs = RunContention({&broken}, sizes, "group, RF=3", "t");
  EXPECT_GT(CheckFailures(runs, "charybdis"), 0u);

  // A get phase with more gets than puts reads nothing past the puts: no
  // failure. A system whose puts vanish fails it.
  class Forgetful : public MemorySystem {
   public:
    Forgetful() : MemorySystem("charybdis") {}
    Outcome Put(const std::string&, const std::string&) override { return Answered(); }
  } forgetful;
  sizes.sequential_puts = 10;
  sizes.sequential_gets = 10;
  sizes.sequential_lwts = 5;
  EXPECT_EQ(CheckFailures(RunSequential({&forgetful}, sizes, "group, RF=3", "t"), "charybdis"), 10u);
}

PhaseRun MadeRun(const std::string& phase, const std::string& measure, const std::string& mode,
             const std::string& system, int64_t latency_us, uint64_t ok) {
  PhaseRun run;
  run.phase = phase;
  run.measure = measure;
  run.mode = mode;
  run.system = system;
  run.result.requests = run.result.ok = run.result.applied = ok;
  run.result.latencies_us.assign(ok, latency_us);
  run.result.seconds = 1;
  return run;
}

TEST(Compare, CqlRunsAreMeasuredAgainstOurOwnGrpcApi) {
  const std::vector<PhaseRun> runs = {
      MadeRun("a", "QUORUM put", kCqlMode, kCqlSystem, 1050, 10),
      MadeRun("a", "QUORUM put", kCqlMode, "charybdis", 1000, 10),
      MadeRun("a", "get", kCqlMode, kCqlSystem, 1200, 10),
      MadeRun("a", "get", kCqlMode, "charybdis", 1000, 10),
  };
  std::map<std::string, Comparison> by_title;
  for (const Comparison& c : Compare(runs)) by_title[c.title] = c;
  const Comparison& put = by_title.at(absl::StrCat("a. QUORUM put p50 (", kCqlSystem, ", ", kCqlMode, ")"));
  EXPECT_DOUBLE_EQ(put.ratio(), 1.05);
  EXPECT_EQ(put.theirs_name, "charybdis");
  EXPECT_EQ(put.goal, 1.1);
  EXPECT_TRUE(put.met());
  EXPECT_FALSE(by_title.at(absl::StrCat("a. get p50 (", kCqlSystem, ", ", kCqlMode, ")")).met());
  // The gRPC runs of that mode are the baseline, compared with nothing.
  EXPECT_EQ(by_title.size(), 4u);  // p50 and p99 of each CQL measure
}

TEST(Compare, CqlLevelsAreMeasuredAgainstOne) {
  MemorySystem one("charybdis cql ONE"), quorum("charybdis cql QUORUM"), all("charybdis cql ALL");
  PhaseSizes sizes;
  sizes.level_requests = 20;
  const std::vector<PhaseRun> runs = RunLevels({&one, &quorum, &all}, sizes, "group, RF=3, CQL", "t");
  ASSERT_EQ(runs.size(), 6u);  // put and get, three levels each
  EXPECT_EQ(runs[0].result.ok, 20u);
  std::map<std::string, const Comparison*> by_title;
  const std::vector<Comparison> comparisons = Compare(runs);
  for (const Comparison& c : comparisons) by_title[c.title] = &c;
  EXPECT_EQ(comparisons.size(), 4u);  // QUORUM and ALL against ONE, put and get
  const Comparison& all_put = *by_title.at("q. CQL put p50 at ALL / at ONE (group, RF=3, CQL)");
  EXPECT_EQ(all_put.theirs_name, "charybdis cql ONE");
  EXPECT_FALSE(all_put.goal.has_value());
  EXPECT_EQ(by_title.count("q. CQL get p50 at QUORUM / at ONE (group, RF=3, CQL)"), 1u);
}

TEST(Compare, RatiosAgainstEtcdWithTheIssuesGoals) {
  const std::vector<PhaseRun> runs = {
      MadeRun("a", "QUORUM put", "group, RF=3", "charybdis", 300, 10),
      MadeRun("a", "QUORUM put", "group, RF=3", "etcd", 1000, 10),
      MadeRun("a", "LWT IF NOT EXISTS", "group, RF=3", "charybdis", 900, 10),
      MadeRun("a", "LWT IF NOT EXISTS", "group, RF=3", "etcd", 1000, 10),
      MadeRun("b", "64 puts in flight", "group, RF=3", "charybdis", 1, 5000),
      MadeRun("b", "64 puts in flight", "group, RF=3", "etcd", 1, 2000),
      MadeRun("a", "QUORUM put", "periodic, RF=3", "charybdis periodic", 100, 10),
      MadeRun("a", "QUORUM put", "periodic, RF=3", "etcd", 1000, 10),
      MadeRun("d", "LWT load, single rows", "group, RF=3", "charybdis naive", 0, 0),
      MadeRun("d", "LWT load, single rows", "group, RF=3", "etcd", 50000, 100),
  };
  const std::vector<Comparison> comparisons = Compare(runs);
  std::map<std::string, const Comparison*> by_title;
  for (const Comparison& c : comparisons) by_title[c.title] = &c;
  const Comparison& put = *by_title.at("a. QUORUM put p50 (charybdis, group, RF=3)");
  EXPECT_DOUBLE_EQ(put.ratio(), 0.3);
  EXPECT_EQ(put.goal, 0.4);
  EXPECT_TRUE(put.met());
  const Comparison& lwt = *by_title.at("a. LWT IF NOT EXISTS p50 (charybdis, group, RF=3)");
  EXPECT_DOUBLE_EQ(lwt.ratio(), 0.9);
  EXPECT_FALSE(lwt.met());  // goal 0.6
  const Comparison& own = *by_title.at("a. LWT p50 / our own QUORUM put p50 (charybdis, group, RF=3)");
  EXPECT_DOUBLE_EQ(own.ratio(), 3.0);
  EXPECT_FALSE(own.met());  // goal 2.0
  const Comparison& in_flight = *by_title.at("b. 64 puts in flight rows/s (charybdis, group, RF=3)");
  EXPECT_DOUBLE_EQ(in_flight.ratio(), 2.5);
  EXPECT_TRUE(in_flight.met());  // goal >= 2
  const Comparison& periodic = *by_title.at("a. QUORUM put p50 (charybdis periodic, periodic, RF=3)");
  EXPECT_FALSE(periodic.goal.has_value());  // the goals are for group mode
  // A run that answered nothing has a throughput of 0 and no latencies.
  EXPECT_DOUBLE_EQ(by_title.at("d. LWT load, single rows rows/s (charybdis naive, group, RF=3)")->ratio(), 0);
  EXPECT_EQ(by_title.count("d. LWT load, single rows p99 (charybdis naive, group, RF=3)"), 0u);

  const std::string svg = RatioChartSvg(comparisons);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("a. QUORUM put p50 (charybdis, group, RF=3)"), std::string::npos);
  const nlohmann::json json = ReportJson(runs, comparisons);
  EXPECT_EQ(json["runs"].size(), runs.size());
  EXPECT_EQ(json["comparisons"].size(), comparisons.size());
}

TEST(Compare, TheMachinesFloorIsSetBesideEtcdsPutAndLwt) {
  const std::vector<PhaseRun> runs = {
      MadeRun("a", "QUORUM put", "group, RF=3", "charybdis", 700, 10),
      MadeRun("a", "QUORUM put", "group, RF=3", "etcd", 1000, 10),
      MadeRun("a", "LWT IF NOT EXISTS", "group, RF=3", "etcd", 1250, 10),
      MadeRun("a", "QUORUM put", "periodic, RF=3", "etcd", 2000, 10),  // not group mode: no floor
  };
  MachineFloor floor;
  floor.loopback_round_trip_us = 50;
  floor.fdatasync_us = 300;
  floor.sync_writers = 3;
  const std::vector<Comparison> comparisons = FloorComparisons(floor, runs);
  ASSERT_EQ(comparisons.size(), 2u);
  EXPECT_EQ(comparisons[0].title,
            "a. QUORUM put floor (this machine: loopback round trip 50 us, fdatasync 300 us with 3 at once)");
  EXPECT_DOUBLE_EQ(comparisons[0].ratio(), 0.4);  // 400 us of etcd's 1000
  EXPECT_FALSE(comparisons[0].goal.has_value());
  EXPECT_DOUBLE_EQ(comparisons[1].ratio(), 0.36);  // 450 us of etcd's 1250
  EXPECT_TRUE(FloorComparisons(floor, {runs[0]}).empty());  // no etcd run, nothing to set it beside
}

}  // namespace
}  // namespace charybdis::node
