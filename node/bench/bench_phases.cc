#include "node/bench/bench_phases.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace charybdis::node {

namespace {

constexpr char kCheckPrefix[] = "CHECK: ";

Outcome CheckFailure(const std::string& what) {
  Outcome outcome;
  outcome.error = absl::StrCat(kCheckPrefix, what);
  return outcome;
}

// Measures `run` on each system in turn, one PhaseRun each; `measure`
// drives one system (`label` names it in progress lines).
using Measure = std::function<LoadResult(BenchSystem& system, const std::string& label)>;
void RunOnEach(const std::vector<BenchSystem*>& systems, PhaseRun run, const Measure& measure,
               std::vector<PhaseRun>& runs) {
  for (BenchSystem* system : systems) {
    const std::string label = absl::StrCat(run.measure, " on ", system->name());
    std::cerr << "bench: " << label << " (" << run.mode << ")\n";
    run.system = system->name();
    run.result = measure(*system, label);
    std::cerr << "  " << run.result.Summary() << "\n";
    runs.push_back(run);
  }
}

// Closed-loop load of `request` (RunLoad) as a Measure.
Measure Closed(const LoadOptions& options,
               std::function<Outcome(BenchSystem&, uint32_t client, uint64_t i)> request) {
  return [options, request = std::move(request)](BenchSystem& system, const std::string& label) {
    LoadOptions labelled = options;
    labelled.label = label;
    return RunLoad(labelled, [&](uint32_t client, uint64_t i) { return request(system, client, i); });
  };
}

// The same with `clients` requests in flight from one thread (RunAsyncLoad).
Measure InFlight(const LoadOptions& options,
                 std::function<void(BenchSystem&, uint64_t i, OutcomeDone done)> request) {
  return [options, request = std::move(request)](BenchSystem& system, const std::string& label) {
    LoadOptions labelled = options;
    labelled.label = label;
    return RunAsyncLoad(labelled, [&](uint64_t i, OutcomeDone done) { request(system, i, std::move(done)); });
  };
}

PhaseRun NewRun(const std::string& phase, const std::string& measure, const std::string& mode) {
  PhaseRun run;
  run.phase = phase;
  run.measure = measure;
  run.mode = mode;
  return run;
}

std::string ValueOf(uint64_t i) { return absl::StrCat("value-", i); }

// IF NOT EXISTS on a key nobody wrote: it must apply.
Outcome InsertFresh(BenchSystem& system, const std::string& key, uint64_t i) {
  Outcome outcome = system.CompareAndSet(key, std::nullopt, ValueOf(i));
  if (outcome.ok && !outcome.applied) return CheckFailure("IF NOT EXISTS on a fresh key did not apply");
  return outcome;
}

}  // namespace

bool IsCheckFailure(const std::string& error_kind) { return error_kind.rfind(kCheckPrefix, 0) == 0; }

std::vector<PhaseRun> RunSequential(const std::vector<BenchSystem*>& systems, const PhaseSizes& sizes,
                                    const std::string& mode, const std::string& tag) {
  std::vector<PhaseRun> runs;
  LoadOptions options;
  options.max_duration = std::chrono::seconds(sizes.max_phase_seconds);
  options.progress_every = 5000;
  const std::string put_keys = absl::StrCat(tag, "/a/put/");
  options.max_requests = sizes.sequential_puts;
  RunOnEach(systems, NewRun("a", "QUORUM put", mode), Closed(options, [&](BenchSystem& system, uint32_t, uint64_t i) {
    return system.Put(absl::StrCat(put_keys, i), ValueOf(i));
  }), runs);
  // Reads what the puts wrote (keys past the puts' count find nothing).
  options.max_requests = sizes.sequential_gets;
  RunOnEach(systems, NewRun("a", "get", mode), Closed(options, [&](BenchSystem& system, uint32_t, uint64_t i) {
    Outcome outcome = system.Get(absl::StrCat(put_keys, i));
    if (outcome.ok && i < sizes.sequential_puts && outcome.value != ValueOf(i)) {
      return CheckFailure("a read missed an acknowledged put");
    }
    return outcome;
  }), runs);
  options.max_requests = sizes.sequential_lwts;
  RunOnEach(systems, NewRun("a", "LWT IF NOT EXISTS", mode), Closed(options, [&](BenchSystem& system, uint32_t, uint64_t i) {
    return InsertFresh(system, absl::StrCat(tag, "/a/lwt/", i), i);
  }), runs);
  return runs;
}

std::vector<PhaseRun> RunInFlight(const std::vector<BenchSystem*>& systems, const PhaseSizes& sizes,
                                  const std::string& mode, const std::string& tag) {
  std::vector<PhaseRun> runs;
  LoadOptions options;
  options.clients = sizes.in_flight;
  options.max_requests = 100'000'000;
  options.max_duration = std::chrono::seconds(sizes.in_flight_seconds);
  options.progress_every = 20000;
  RunOnEach(systems, NewRun("b", absl::StrCat(sizes.in_flight, " puts in flight"), mode), InFlight(options,
            [&](BenchSystem& system, uint64_t i, OutcomeDone done) {
              system.StartPut(absl::StrCat(tag, "/b/", i), ValueOf(i), std::move(done));
            }), runs);
  return runs;
}

// Lock-step contention on one counter, as in ../shared/seeds/000: every
// client reads it (SERIAL), all wait, then every client sets it to one
// more if it still holds what was read, all wait, round after round. So
// exactly one attempt per round applies when nothing times out. Afterwards
// the counter must equal the number of applied attempts.
std::vector<PhaseRun> RunContention(const std::vector<BenchSystem*>& systems, const PhaseSizes& sizes,
                                    const std::string& mode, const std::string& tag) {
  std::vector<PhaseRun> runs;
  for (uint32_t clients : sizes.contention_clients) {
    const std::string counter = absl::StrCat(tag, "/c/counter-", clients);
    const size_t first = runs.size();
    RunOnEach(systems, NewRun("c", absl::StrCat("contention ", clients, " clients"), mode),
              [&](BenchSystem& system, const std::string&) {
                return RunLockStep(
                    clients, sizes.contention_attempts, std::chrono::seconds(sizes.max_phase_seconds),
                    [&](uint32_t, uint64_t) { return system.SerialGet(counter); },
                    [&](uint32_t, const Outcome& read) {
                      const uint64_t next = read.value ? std::stoull(*read.value) + 1 : 1;
                      return system.CompareAndSet(counter, read.value, absl::StrCat(next));
                    });
              },
              runs);
    for (size_t r = first; r < runs.size(); r++) {
      BenchSystem& system = *systems[r - first];
      const Outcome final_read = system.SerialGet(counter);
      const uint64_t final_value = final_read.value ? std::stoull(*final_read.value) : 0;
      // A timed-out attempt may still have applied, so the counter may be
      // ahead of the attempts known to apply, never behind.
      const uint64_t timed_out = runs[r].result.failed();
      if (!final_read.ok || final_value < runs[r].result.applied ||
          final_value > runs[r].result.applied + timed_out) {
        std::cerr << "  " << system.name() << ": counter " << final_value << " after "
                  << runs[r].result.applied << " applied increments\n";
        runs[r].result.errors[absl::StrCat(kCheckPrefix, "the counter does not match the applied increments")]++;
      }
    }
  }
  return runs;
}

// The LWT load test of ../shared/seeds/004: many conditional inserts in
// flight into ONE partition, each of `batch` rows with fresh clustering
// keys, so every one must apply.
std::vector<PhaseRun> RunLwtLoad(const std::vector<BenchSystem*>& systems, const PhaseSizes& sizes,
                                 const std::string& mode, const std::string& tag) {
  std::vector<PhaseRun> runs;
  for (uint32_t batch : sizes.lwt_load_batches) {
    LoadOptions options;
    options.clients = sizes.lwt_load_in_flight;
    options.max_requests = 100'000'000;
    options.max_duration = std::chrono::seconds(sizes.lwt_load_seconds);
    const std::string partition = absl::StrCat(tag, "/d/batch-", batch);
    PhaseRun run = NewRun("d", batch == 1 ? "LWT load, single rows" : absl::StrCat("LWT load, batches of ", batch), mode);
    run.rows_per_request = batch;
    RunOnEach(systems, run, InFlight(options, [&](BenchSystem& system, uint64_t i, OutcomeDone done) {
      std::vector<std::string> clustering_keys;
      for (uint64_t row = i * batch; row < (i + 1) * batch; row++) {
        clustering_keys.push_back(absl::StrFormat("%012d", row));
      }
      system.StartInsertIfNotExists(partition, clustering_keys, "data", [done = std::move(done)](Outcome outcome) {
        if (outcome.ok && !outcome.applied) outcome = CheckFailure("a conditional insert of fresh rows did not apply");
        done(std::move(outcome));
      });
    }), runs);
  }
  return runs;
}

std::vector<PhaseRun> RunLevels(const std::vector<BenchSystem*>& systems, const PhaseSizes& sizes,
                                const std::string& mode, const std::string& tag) {
  std::vector<PhaseRun> runs;
  LoadOptions options;
  options.max_requests = sizes.level_requests;
  options.max_duration = std::chrono::seconds(sizes.max_phase_seconds);
  auto key = [&](const BenchSystem& system, uint64_t i) { return absl::StrCat(tag, "/q/", system.name(), "/", i); };
  RunOnEach(systems, NewRun("q", "put", mode), Closed(options, [&](BenchSystem& system, uint32_t, uint64_t i) {
    return system.Put(key(system, i), ValueOf(i));
  }), runs);
  // Latency only: at ONE a get may read a replica its put has not reached
  // yet, as in Cassandra (phase a checks what reads return).
  RunOnEach(systems, NewRun("q", "get", mode), Closed(options, [&](BenchSystem& system, uint32_t, uint64_t i) {
    return system.Get(key(system, i));
  }), runs);
  return runs;
}

PhaseRun RunMemory(BenchSystem& system, const PhaseSizes& sizes, const std::string& mode, const std::string& tag,
                   const std::function<uint64_t()>& resident_bytes, std::vector<MemorySample>& samples) {
  constexpr uint64_t kParts = 10;
  PhaseRun run = NewRun("m", "LWT IF NOT EXISTS on fresh keys", mode);
  run.system = system.name();
  LoadOptions options;
  options.clients = sizes.in_flight;
  options.max_requests = sizes.memory_lwts / kParts;
  options.max_duration = std::chrono::seconds(sizes.max_phase_seconds);
  uint64_t done = 0;
  std::cerr << "bench: memory across " << sizes.memory_lwts << " LWTs on fresh keys, " << sizes.in_flight
            << " in flight (" << run.system << ", " << mode << ")\n";
  for (uint64_t part = 0; part < kParts; part++) {
    const uint64_t first = done;
    const LoadResult result = RunLoad(
        options, [&](uint32_t, uint64_t i) { return InsertFresh(system, absl::StrCat(tag, "/m/", first + i), i); });
    done += result.requests;
    Merge(result, run.result);
    run.result.seconds += result.seconds;
    samples.push_back(MemorySample{done, resident_bytes()});
    std::cerr << absl::StrFormat("  %d LWTs: resident %.1f MiB; %s\n", done,
                                 static_cast<double>(samples.back().resident_bytes) / (1 << 20), result.Summary());
  }
  return run;
}

}  // namespace charybdis::node
