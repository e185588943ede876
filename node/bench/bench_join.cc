#include "node/bench/bench_join.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "node/bench/machine_floor.h"
#include "node/ctl/topology_operation.h"

namespace charybdis::node {

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point began) {
  return std::chrono::duration<double>(Clock::now() - began).count();
}

absl::Status Load(BenchSystem& client, const JoinSizes& sizes) {
  const std::string value = IncompressibleValue(sizes.value_bytes);
  LoadOptions options;
  options.clients = sizes.load_in_flight;
  options.max_requests = sizes.data_bytes / sizes.value_bytes;
  options.max_duration = std::chrono::hours(2);
  options.progress_every = std::max<uint64_t>(options.max_requests / 10, 1);
  options.label = "j. loading";
  const LoadResult loaded = RunAsyncLoad(options, [&](uint64_t i, OutcomeDone done) {
    client.StartPut(absl::StrCat("join-data-", i), value, std::move(done));
  });
  if (loaded.failed() > 0) {
    return absl::UnavailableError(absl::StrCat("loading before the join: ", loaded.Summary()));
  }
  return absl::OkStatus();
}

struct Window {
  LoadResult puts;
  LoadResult lwts;
};

// QUORUM puts and IF NOT EXISTS on fresh keys side by side for the window.
Window MeasureWindow(BenchSystem& client, const JoinSizes& sizes, const std::string& tag) {
  Window window;
  LoadOptions options;
  options.max_requests = 1ull << 40;  // the window bounds it
  options.max_duration = std::chrono::seconds(sizes.window_seconds);
  std::thread lwts([&] {
    LoadOptions lwt_options = options;
    lwt_options.clients = sizes.lwt_clients;
    window.lwts = RunLoad(lwt_options, [&](uint32_t, uint64_t i) {
      return client.CompareAndSet(absl::StrCat("join-", tag, "-lwt-", i), std::nullopt, "v");
    });
  });
  options.clients = sizes.put_clients;
  window.puts = RunLoad(options, [&](uint32_t, uint64_t i) {
    return client.Put(absl::StrCat("join-", tag, "-put-", i % 1000), "v");
  });
  lwts.join();
  return window;
}

// When node `node`'s own streams began and ended, as its status shows
// them (it drives its join), polled until `stop`. The driver moves on as
// soon as its streams are done, so a poll may see the next stage instead:
// that ends them too.
struct StreamingSeen {
  std::optional<Clock::time_point> first_running;
  std::optional<Clock::time_point> all_done;
};
void WatchStreams(const LocalCluster& cluster, NodeId node, const std::atomic<bool>& stop, StreamingSeen& seen) {
  uint64_t streaming_version = 0;
  while (!stop.load() && !seen.all_done) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    StatusResponse status;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    if (!cluster.Connect(node)->Status(&context, StatusRequest(), &status).ok()) continue;
    if (streaming_version == 0) {
      if (status.streams() == 0) continue;
      streaming_version = status.topology_version();
      seen.first_running = Clock::now();
    }
    if (status.topology_version() > streaming_version || status.streams_done() == status.streams()) {
      seen.all_done = Clock::now();
    }
  }
}

}  // namespace

absl::StatusOr<JoinMeasures> RunJoin(LocalCluster& cluster, BenchSystem& client, const JoinSizes& sizes,
                                     const std::string& floor_directory) {
  JoinMeasures measures;
  std::cerr << "bench: j. loading " << sizes.data_bytes / (1 << 20) << " MiB at RF=3\n";
  if (absl::Status loaded = Load(client, sizes); !loaded.ok()) return loaded;
  measures.data_bytes = sizes.data_bytes / sizes.value_bytes * sizes.value_bytes;
  std::cerr << "bench: j. " << sizes.window_seconds << " s of QUORUM puts and LWTs before the join\n";
  Window before = MeasureWindow(client, sizes, "before");
  measures.puts_before = std::move(before.puts);
  measures.lwts_before = std::move(before.lwts);

  const absl::StatusOr<NodeId> added = cluster.AddNode("");
  if (!added.ok()) return added.status();
  const auto began = Clock::now();
  if (absl::Status started = cluster.Start(*added); !started.ok()) return started;
  std::cerr << "bench: j. node " << *added << " joins; " << sizes.window_seconds << " s of the same load from now\n";
  Window during;
  std::thread load([&] { during = MeasureWindow(client, sizes, "during"); });
  std::atomic<bool> stop{false};
  StreamingSeen seen;
  std::thread streams([&] { WatchStreams(cluster, *added, stop, seen); });
  const absl::Status joined =
      WatchJoin(*added, cluster.client_address(*added), std::chrono::seconds(sizes.join_timeout_seconds),
                [](const std::string& line) { std::cerr << "  " << line << "\n"; });
  measures.join_seconds = SecondsSince(began);
  stop = true;
  streams.join();
  load.join();
  if (!joined.ok()) return joined;
  measures.puts_during = std::move(during.puts);
  measures.lwts_during = std::move(during.lwts);
  if (seen.first_running && seen.all_done) {
    measures.streaming_seconds = std::chrono::duration<double>(*seen.all_done - *seen.first_running).count();
  }
  const absl::StatusOr<uint64_t> streamed = cluster.MetricTotal(*added, "stream_bytes_received");
  if (!streamed.ok()) return streamed.status();
  measures.bytes_streamed = *streamed;
  if (measures.bytes_streamed == 0) return absl::InternalError("node 4 joined but stored no streamed bytes");
  const absl::StatusOr<double> floor = MeasureSequentialWriteBytesPerSecond(floor_directory, measures.bytes_streamed);
  if (!floor.ok()) return floor.status();
  measures.write_floor_bytes_per_second = *floor;
  return measures;
}

std::vector<Comparison> JoinComparisons(const JoinMeasures& measures) {
  // Streams quicker than a status poll are timed by the whole join,
  // barriers included: a lower bound on their throughput.
  const bool timed = measures.streaming_seconds > 0;
  const double seconds = timed ? measures.streaming_seconds : measures.join_seconds;
  Comparison streaming{absl::StrFormat("j. join streaming into the new node, MB/s (%.1f MiB in %.1f s%s)",
                                       measures.bytes_streamed / 1048576.0, seconds,
                                       timed ? "" : ", the whole join: streams ended between status polls"),
                       "MB/s", measures.bytes_streamed / seconds / 1e6, measures.write_floor_bytes_per_second / 1e6,
                       "sequential write floor, same bytes", /*lower_is_better=*/false, 0.5};
  // During the join beside just before.
  auto during = [](std::string title, int64_t ours_us, int64_t before_us, double goal) {
    return Comparison{std::move(title), "us", static_cast<double>(ours_us), static_cast<double>(before_us),
                      "just before", /*lower_is_better=*/true, goal};
  };
  return {streaming,
          during("j. QUORUM put p99 during the join", measures.puts_during.p99_us(), measures.puts_before.p99_us(), 2.0),
          during("j. LWT IF NOT EXISTS p50 during the join", measures.lwts_during.p50_us(),
                 measures.lwts_before.p50_us(), 1.5)};
}

}  // namespace charybdis::node
