#include "node/bench/bench_repair.h"

#include <chrono>
#include <filesystem>
#include <iostream>
#include <limits>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "node/ctl/topology_operation.h"

namespace charybdis::node {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point began) {
  return std::chrono::duration<double>(Clock::now() - began).count();
}

// Writes (or deletes) keys `prefix`0 .. `prefix`count-1, `in_flight` at a time.
absl::Status WriteAll(BenchSystem& client, const std::string& prefix, uint64_t count, const std::string& value,
                      bool deletes, uint32_t in_flight, const std::string& label) {
  LoadOptions options;
  options.clients = in_flight;
  options.max_requests = count;
  options.max_duration = std::chrono::hours(2);
  options.progress_every = std::max<uint64_t>(count / 5, 1);
  options.label = label;
  const LoadResult done = RunAsyncLoad(options, [&](uint64_t i, OutcomeDone answer) {
    const std::string key = absl::StrCat(prefix, i);
    deletes ? client.StartDelete(key, std::move(answer)) : client.StartPut(key, value, std::move(answer));
  });
  if (done.failed() > 0 || done.requests < count) return absl::UnavailableError(absl::StrCat(label, ": ", done.Summary()));
  return absl::OkStatus();
}

// What the nodes keep on disk: every file of their data directories but
// RocksDB's informational LOG files.
uint64_t StoredBytes(const LocalCluster& cluster) {
  uint64_t total = 0;
  for (NodeId id : cluster.nodes()) {
    std::error_code error;
    for (auto it = fs::recursive_directory_iterator(cluster.data_directory(id), error);
         !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
      if (it->is_regular_file(error) && it->path().filename().string().rfind("LOG", 0) != 0) {
        total += it->file_size(error);
      }
    }
  }
  return total;
}

// Every node repairs its primary ranges in turn (ctl repair over a local
// cluster): the summaries added up.
absl::StatusOr<RepairSummary> RepairAll(const LocalCluster& cluster, const RepairSizes& sizes) {
  RepairSummary total;
  for (NodeId id : cluster.nodes()) {
    RepairOp op;
    op.set_primary_range(true);
    absl::StatusOr<RepairSummary> summary =
        Repair(cluster.client_address(id), op, std::chrono::seconds(sizes.repair_timeout_seconds));
    if (!summary.ok()) return summary.status();
    total.set_ranges(total.ranges() + summary->ranges());
    total.set_bytes_fetched(total.bytes_fetched() + summary->bytes_fetched());
    total.set_bytes_sent(total.bytes_sent() + summary->bytes_sent());
  }
  return total;
}

absl::Status CompactAll(const LocalCluster& cluster) {
  for (NodeId id : cluster.nodes()) {
    absl::StatusOr<CleanedUp> compacted = Compact(cluster.client_address(id), CompactOp(), std::chrono::hours(1));
    if (!compacted.ok()) return compacted.status();
  }
  return absl::OkStatus();
}

// A COUNT(*) of the table at ONE: every row read once, none sent.
absl::StatusOr<double> TimeFullScan(const LocalCluster& cluster) {
  ExecuteRequest execute;
  ScanOp& scan = *execute.mutable_request()->mutable_scan();
  scan.set_table("kv");
  scan.set_start_token(std::numeric_limits<int64_t>::min());
  scan.set_end_token(std::numeric_limits<int64_t>::max());
  scan.set_count_only(true);
  scan.set_limit(std::numeric_limits<uint32_t>::max());
  scan.set_consistency(CL_ONE);
  const auto began = Clock::now();
  const absl::StatusOr<ClientResponse> counted = ExecuteOk(cluster.client_address(1), execute, std::chrono::hours(1));
  if (!counted.ok()) return counted.status();
  std::cerr << "bench: r. COUNT(*) at ONE: " << counted->row_count() << " rows\n";
  return SecondsSince(began);
}

LoadResult PutWindow(BenchSystem& client, const RepairSizes& sizes, const std::string& tag) {
  LoadOptions options;
  options.clients = sizes.put_clients;
  options.max_requests = 1ull << 40;  // the window bounds it
  options.max_duration = std::chrono::seconds(sizes.window_seconds);
  return RunLoad(options, [&](uint32_t, uint64_t i) { return client.Put(absl::StrCat("r-", tag, "-", i % 1000), "v"); });
}

// Rows written and deleted on the empty cluster, repaired and compacted.
absl::Status MeasureDisk(LocalCluster& cluster, BenchSystem& client, const RepairSizes& sizes,
                         RepairMeasures& measures) {
  const std::string value = IncompressibleValue(sizes.gc_value_bytes);
  if (absl::Status written = WriteAll(client, "gc-", sizes.gc_rows, value, false, sizes.load_in_flight, "r. writing");
      !written.ok()) {
    return written;
  }
  measures.gc_peak_bytes = StoredBytes(cluster);
  if (absl::Status deleted = WriteAll(client, "gc-", sizes.gc_rows, "", true, sizes.load_in_flight, "r. deleting");
      !deleted.ok()) {
    return deleted;
  }
  measures.gc_peak_bytes = std::max(measures.gc_peak_bytes, StoredBytes(cluster));
  if (absl::StatusOr<RepairSummary> repaired = RepairAll(cluster, sizes); !repaired.ok()) return repaired.status();
  if (absl::Status compacted = CompactAll(cluster); !compacted.ok()) return compacted;
  measures.gc_after_bytes = StoredBytes(cluster);
  return absl::OkStatus();
}

// Node 3 misses `missed_fraction` of the data, comes back, and a repair
// brings it: what that repair sent.
absl::Status MeasureMissed(LocalCluster& cluster, BenchSystem& client, const RepairSizes& sizes,
                           RepairMeasures& measures) {
  if (absl::Status stopped = cluster.Stop(3); !stopped.ok()) return stopped;
  const uint64_t count = std::max<uint64_t>(1, sizes.data_bytes * sizes.missed_fraction / sizes.value_bytes);
  const std::string value = IncompressibleValue(sizes.value_bytes, 1);
  if (absl::Status written = WriteAll(client, "missed-", count, value, false, sizes.load_in_flight, "r. node 3 down");
      !written.ok()) {
    return written;
  }
  measures.missed_bytes = count * (sizes.value_bytes + absl::StrCat("missed-", count).size());
  if (absl::Status started = cluster.Start(3); !started.ok()) return started;
  if (absl::Status views = cluster.WaitForViews(30000); !views.ok()) return views;
  const auto began = Clock::now();
  const absl::StatusOr<RepairSummary> repaired = RepairAll(cluster, sizes);
  if (!repaired.ok()) return repaired.status();
  measures.missed_seconds = SecondsSince(began);
  measures.missed_bytes_sent = repaired->bytes_fetched() + repaired->bytes_sent();
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RepairMeasures> RunRepair(LocalCluster& cluster, BenchSystem& client, const RepairSizes& sizes) {
  RepairMeasures measures;
  std::cerr << "bench: r. " << sizes.gc_rows << " rows written and deleted, repaired and compacted\n";
  if (absl::Status disk = MeasureDisk(cluster, client, sizes, measures); !disk.ok()) return disk;
  std::cerr << "bench: r. loading " << sizes.data_bytes / (1 << 20) << " MiB at RF=3\n";
  const uint64_t rows = sizes.data_bytes / sizes.value_bytes;
  if (absl::Status loaded = WriteAll(client, "data-", rows, IncompressibleValue(sizes.value_bytes), false,
                                     sizes.load_in_flight, "r. loading");
      !loaded.ok()) {
    return loaded;
  }
  measures.data_bytes = rows * sizes.value_bytes;
  absl::StatusOr<double> scan = TimeFullScan(cluster);
  if (!scan.ok()) return scan.status();
  measures.scan_seconds = *scan;
  std::cerr << "bench: r. repair of replicas in agreement\n";
  const auto began = Clock::now();
  const absl::StatusOr<RepairSummary> in_sync = RepairAll(cluster, sizes);
  if (!in_sync.ok()) return in_sync.status();
  measures.in_sync_seconds = SecondsSince(began);
  measures.in_sync_bytes_sent = in_sync->bytes_fetched() + in_sync->bytes_sent();
  std::cerr << "bench: r. " << sizes.window_seconds << " s of QUORUM puts, then the same during a repair\n";
  measures.puts_before = PutWindow(client, sizes, "before");
  std::thread load([&] { measures.puts_during = PutWindow(client, sizes, "during"); });
  const absl::StatusOr<RepairSummary> during = RepairAll(cluster, sizes);
  load.join();
  if (!during.ok()) return during.status();
  std::cerr << "bench: r. node 3 misses " << sizes.missed_fraction * 100 << "% of the data\n";
  if (absl::Status missed = MeasureMissed(cluster, client, sizes, measures); !missed.ok()) return missed;
  return measures;
}

std::vector<Comparison> RepairComparisons(const RepairMeasures& m) {
  return {
      Comparison{absl::StrFormat("r. repair of replicas in agreement, bytes sent (%.0f MiB a replica)",
                                 m.data_bytes / 1048576.0),
                 "B", static_cast<double>(m.in_sync_bytes_sent), static_cast<double>(m.data_bytes),
                 "the data a replica holds", /*lower_is_better=*/true, 0.001},
      Comparison{"r. repair of replicas in agreement, seconds", "s", m.in_sync_seconds, m.scan_seconds,
                 "COUNT(*) at ONE of the same data", /*lower_is_better=*/true, 2.0},
      Comparison{"r. repair after node 3 missed 1% of the writes, bytes sent", "B",
                 static_cast<double>(m.missed_bytes_sent), static_cast<double>(m.missed_bytes), "the bytes it missed",
                 /*lower_is_better=*/true, 3.0},
      Comparison{"r. disk after rows written, deleted, repaired and compacted", "B",
                 static_cast<double>(m.gc_after_bytes), static_cast<double>(m.gc_peak_bytes), "its peak",
                 /*lower_is_better=*/true, 0.05},
      Comparison{"r. QUORUM put p99 during a repair", "us", static_cast<double>(m.puts_during.p99_us()),
                 static_cast<double>(m.puts_before.p99_us()), "just before", /*lower_is_better=*/true, 2.0},
  };
}

}  // namespace charybdis::node
