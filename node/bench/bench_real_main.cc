// charybdis-bench-real: Charybdis beside etcd on this machine, in one run
// (`./charybdis bench real`, docs/benchmarks.md).
//
//   charybdis-bench-real [--dir DIR] [--out PREFIX] [--phases abcdpqmjrtl] [--quick]
//
// Starts a local 3-node Charybdis cluster (RF=3, 2 shards per node) and a
// 3-member etcd cluster on loopback, runs the phases on both, measure by
// measure in turn, prints a table of ratios on stdout (progress on stderr),
// writes PREFIX.json and PREFIX.svg, and stops everything it started.
// Phases: a sequential put/get/IF NOT EXISTS; b 64 puts in flight; c
// lock-step contention on one key; d the LWT load test (one partition,
// 250 in flight, batches, RF=3 then RF=1, with the naive mode); p phase a
// (and b, with b) again with commitlog_sync periodic; q phase a through CQL beside our
// gRPC API, on one cluster, and CQL puts and gets at each level; m our
// nodes' memory across 1M LWTs on fresh keys; j a fourth node joins a
// loaded cluster under load (node/bench/bench_join.h); r repair and
// tombstone GC (node/bench/bench_repair.h); t TLS; l paging through a
// big partition (node/bench/bench_big_partition.h). --quick: small sizes, for
// the test suite. Exits 1 if a system broke a promise (a check failed) or served
// no request of a measure (the naive mode excepted).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/env/commitlog_sync.h"
#include "node/bench/bench_join.h"
#include "node/bench/bench_repair.h"
#include "node/bench/bench_big_partition.h"
#include "node/bench/bench_phases.h"
#include "node/bench/bench_tls.h"
#include "node/bench/bench_report.h"
#include "node/bench/stream_storing.h"
#include "node/bench/etcd_cluster.h"
#include "node/local/local_cluster.h"
#include "node/bench/machine_floor.h"
#include "node/server/mutex_mode.h"
#include "node/local/process.h"

namespace charybdis::node {
namespace {

namespace fs = std::filesystem;

struct Flags {
  std::string directory;
  std::string out = "bench-real";
  std::string phases = "abcdpqmjrtl";
  bool quick = false;
};

constexpr uint32_t kShards = 2;

PhaseSizes QuickSizes() {
  PhaseSizes sizes;
  sizes.sequential_puts = 300;
  sizes.sequential_gets = 300;
  sizes.sequential_lwts = 100;
  sizes.in_flight_seconds = 2;
  sizes.contention_clients = {4};
  sizes.contention_attempts = 25;
  sizes.lwt_load_in_flight = 32;
  sizes.lwt_load_seconds = 2;
  sizes.lwt_load_batches = {1, 50};
  sizes.memory_lwts = 5000;
  sizes.level_requests = 100;
  sizes.max_phase_seconds = 60;
  return sizes;
}

// A running local cluster of ours and a client of its node 1. It stops
// the cluster when it goes (what is already stopped stays so), so that a
// phase failing halfway leaves nothing running.
struct OurCluster {
  OurCluster() = default;
  OurCluster(OurCluster&&) = default;
  ~OurCluster() {
    if (cluster != nullptr) cluster->StopAll().IgnoreError();
  }

  std::unique_ptr<LocalCluster> cluster;
  std::unique_ptr<BenchSystem> client;
  std::unique_ptr<BenchSystem> cql_client;  // the same node, through CQL
};

absl::StatusOr<OurCluster> StartOurs(const std::string& directory, uint32_t replication_factor,
                                     const std::string& name, const std::string& extra_config, bool shard_aware,
                                     const Table& kv = TableNamed("kv"), bool tls = false) {
  LocalCluster::Options options;
  options.nodes = 3;
  options.shards = kShards;
  options.replication_factor = replication_factor;
  options.tables = {kv};
  options.cql_schema = BenchCqlSchema(replication_factor);
  options.extra_config = extra_config;
  options.power_loss_journal = false;  // as deployed: nothing cuts its power here
  options.tls = tls;
  std::cerr << "bench: starting " << name << " (RF=" << replication_factor << ") in " << directory << "\n";
  auto created = LocalCluster::Create(directory, NodeBinaryBesideSelf(), options);
  if (!created.ok()) return created.status();
  OurCluster ours;
  ours.cluster = std::make_unique<LocalCluster>(std::move(*created));
  if (absl::Status started = ours.cluster->StartAll(); !started.ok()) return started;
  CharybdisClientOptions client;
  client.name = name;
  client.address = ours.cluster->client_address(1);
  client.shards = kShards;
  client.shard_aware = shard_aware;
  ours.client = ConnectCharybdis(client);
  CqlClientOptions cql;
  cql.address = ours.cluster->cql_address(1);
  if (tls) cql.ca_file = directory + "/ca.pem";
  ours.cql_client = ConnectCql(cql);
  return ours;
}

absl::StatusOr<std::unique_ptr<EtcdCluster>> StartEtcd(const std::string& directory, uint32_t members) {
  std::cerr << "bench: starting etcd (" << members << " members) in " << directory << "\n";
  EtcdCluster::Options options;
  options.members = members;
  auto started = EtcdCluster::Start(directory, options);
  if (!started.ok()) return started.status();
  return std::make_unique<EtcdCluster>(std::move(*started));
}

bool Has(const Flags& flags, char phase) { return flags.phases.find(phase) != std::string::npos; }

void Append(std::vector<PhaseRun>& runs, std::vector<PhaseRun> more) {
  runs.insert(runs.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
}

// Phase q's levels: a CQL client per level, all on node 1.
std::vector<PhaseRun> RunCqlLevels(const LocalCluster& cluster, const PhaseSizes& sizes) {
  std::vector<std::unique_ptr<BenchSystem>> clients;
  std::vector<BenchSystem*> systems;
  for (ConsistencyLevel level : {CL_ONE, CL_LOCAL_QUORUM, CL_QUORUM, CL_ALL}) {
    CqlClientOptions options;
    options.name = absl::StrCat(kCqlSystem, " ", ConsistencyLevel_Name(level).substr(3));  // no "CL_"
    options.address = cluster.cql_address(1);
    options.level = level;
    clients.push_back(ConnectCql(options));
    systems.push_back(clients.back().get());
  }
  return RunLevels(systems, sizes, "group, RF=3, CQL", "rf3-levels");
}

// What the phases found.
struct Results {
  std::vector<PhaseRun> runs;
  std::vector<MemorySample> memory;  // phase m
  std::optional<MachineFloor> floor;  // measured before phase a
  std::optional<JoinMeasures> join;   // phase j
  std::optional<StreamStoringMeasures> storing;  // phase j
  std::optional<RepairMeasures> repair;          // phase r
  std::optional<Comparison> tls;                 // phase t
  std::optional<BigPartitionMeasures> big_partition;  // phase l
  BigPartitionSizes big_partition_sizes;
};

// The machine's floor, measured while both clusters are idle, so that
// phase a's goals can be read against it (docs/benchmarks.md).
std::optional<MachineFloor> MeasureFloor(const std::string& directory) {
  std::cerr << "bench: measuring this machine's floor (loopback round trips, fdatasyncs 3 at once)\n";
  std::error_code error;
  fs::create_directories(directory, error);
  auto floor = MeasureMachineFloor(directory);
  if (!floor.ok()) {
    std::cerr << "bench: no floor: " << floor.status() << "\n";
    return std::nullopt;
  }
  std::cerr << "  loopback round trip " << floor->loopback_round_trip_us << " us, fdatasync " << floor->fdatasync_us
            << " us (" << floor->sync_writers << " at once): a QUORUM put cannot beat " << floor->quorum_put_us()
            << " us here, an LWT " << floor->lwt_us() << " us\n";
  return *floor;
}

// Every node's resident memory, summed.
uint64_t ResidentBytes(const LocalCluster& cluster) {
  uint64_t bytes = 0;
  for (NodeId id : cluster.nodes()) bytes += cluster.ResidentBytes(id);
  return bytes;
}

// What every node's log writers did so far (node/server/log_writer.h).
struct GroupCommit {
  uint64_t synced_writes = 0;
  uint64_t syncs = 0;
};

absl::StatusOr<GroupCommit> GroupCommitSoFar(const LocalCluster& cluster) {
  GroupCommit so_far;
  for (NodeId id : cluster.nodes()) {
    auto writes = cluster.MetricTotal(id, "storage_synced_writes");
    if (!writes.ok()) return writes.status();
    auto syncs = cluster.MetricTotal(id, "storage_syncs");
    if (!syncs.ok()) return syncs.status();
    so_far.synced_writes += *writes;
    so_far.syncs += *syncs;
  }
  return so_far;
}

// Phase b on our cluster, saying on stderr how many writes shared each
// fsync meanwhile: where its time goes (docs/benchmarks.md).
std::vector<PhaseRun> RunInFlightCountingSyncs(const LocalCluster& cluster, const std::vector<BenchSystem*>& systems,
                                               const PhaseSizes& sizes, const std::string& mode) {
  const absl::StatusOr<GroupCommit> before = GroupCommitSoFar(cluster);
  std::vector<PhaseRun> runs = RunInFlight(systems, sizes, mode, "rf3");
  const absl::StatusOr<GroupCommit> after = GroupCommitSoFar(cluster);
  if (!before.ok() || !after.ok()) {
    std::cerr << "bench: no group commit counts: " << (before.ok() ? after.status() : before.status()) << "\n";
    return runs;
  }
  const uint64_t writes = after->synced_writes - before->synced_writes;
  const uint64_t syncs = after->syncs - before->syncs;
  std::cerr << "bench: b. group commit on charybdis: " << writes << " synced writes shared " << syncs << " fsyncs ("
            << absl::StrFormat("%.1f", syncs == 0 ? 0.0 : static_cast<double>(writes) / syncs)
            << " per fsync) on the cluster's " << cluster.nodes().size() << " nodes\n";
  return runs;
}

// Phases a-d and m at RF=3 and phase a in periodic mode, beside a 3-member
// etcd.
absl::Status RunReplicated(const Flags& flags, const PhaseSizes& sizes, Results& results) {
  std::vector<PhaseRun>& runs = results.runs;
  auto etcd = StartEtcd(flags.directory + "/etcd-3", 3);
  if (!etcd.ok()) return etcd.status();
  const std::unique_ptr<BenchSystem> etcd_client = ConnectEtcd((*etcd)->client_address(0));
  const std::string mode = "group, RF=3";
  {
    auto ours = StartOurs(flags.directory + "/rf3-group", 3, "charybdis", "", true);
    if (!ours.ok()) return ours.status();
    const std::vector<BenchSystem*> both = {ours->client.get(), etcd_client.get()};
    if (Has(flags, 'a')) {
      results.floor = MeasureFloor(flags.directory + "/floor");
      Append(runs, RunSequential(both, sizes, mode, "rf3"));
    }
    if (Has(flags, 'b')) Append(runs, RunInFlightCountingSyncs(*ours->cluster, both, sizes, mode));
    if (Has(flags, 'c')) Append(runs, RunContention(both, sizes, mode, "rf3"));
    if (Has(flags, 'q')) {
      // The two APIs of one node, measure by measure in turn.
      Append(runs, RunSequential({ours->cql_client.get(), ours->client.get()}, sizes, kCqlMode, "rf3-cql"));
      Append(runs, RunCqlLevels(*ours->cluster, sizes));
    }
    if (Has(flags, 'd')) {
      auto naive = StartOurs(flags.directory + "/rf3-naive", 3, "charybdis naive", "disable_lwt_batching: true\n", false);
      if (!naive.ok()) return naive.status();
      Append(runs, RunLwtLoad({ours->client.get(), naive->client.get(), etcd_client.get()}, sizes, mode, "rf3"));
      if (absl::Status stopped = naive->cluster->StopAll(); !stopped.ok()) return stopped;
    }
    if (absl::Status stopped = ours->cluster->StopAll(); !stopped.ok()) return stopped;
  }
  if (Has(flags, 'p')) {
    auto periodic = StartOurs(flags.directory + "/rf3-periodic", 3, "charybdis periodic",
                              absl::StrCat("commitlog_sync { mode: PERIODIC period_ms: ", kDefaultSyncPeriodMs, " }\n"), true);
    if (!periodic.ok()) return periodic.status();
    const std::vector<BenchSystem*> both = {periodic->client.get(), etcd_client.get()};
    Append(runs, RunSequential(both, sizes, "periodic, RF=3", "rf3-periodic"));
    // With b, phase b too: how far a put load gets with no fsync at all.
    if (Has(flags, 'b')) Append(runs, RunInFlight(both, sizes, "periodic, RF=3", "rf3-periodic"));
    if (absl::Status stopped = periodic->cluster->StopAll(); !stopped.ok()) return stopped;
  }
  if (Has(flags, 'm')) {
    // A cluster of its own: the million partitions it leaves behind must
    // not slow the other phases down.
    auto fresh = StartOurs(flags.directory + "/rf3-memory", 3, "charybdis", "", true);
    if (!fresh.ok()) return fresh.status();
    const LocalCluster& cluster = *fresh->cluster;
    runs.push_back(RunMemory(*fresh->client, sizes, mode, "rf3", [&cluster] { return ResidentBytes(cluster); },
                             results.memory));
    if (absl::Status stopped = fresh->cluster->StopAll(); !stopped.ok()) return stopped;
  }
  return (*etcd)->Stop();
}

// Phase j on a cluster of its own: a fourth node joins under load.
absl::Status RunJoinPhase(const Flags& flags, Results& results) {
  auto ours = StartOurs(flags.directory + "/rf3-join", 3, "charybdis", "", true);
  if (!ours.ok()) return ours.status();
  JoinSizes sizes;
  if (flags.quick) {
    sizes.data_bytes = 4 << 20;
    sizes.window_seconds = 2;
    sizes.join_timeout_seconds = 120;
  }
  const std::string floor_directory = flags.directory + "/join-floor";
  std::error_code error;
  fs::create_directories(floor_directory, error);
  absl::StatusOr<JoinMeasures> measures = RunJoin(*ours->cluster, *ours->client, sizes, floor_directory);
  if (!measures.ok()) return measures.status();
  results.join = *std::move(measures);
  if (absl::Status stopped = ours->cluster->StopAll(); !stopped.ok()) return stopped;
  StreamStoringSizes storing;
  if (flags.quick) storing.bytes = 8 << 20;
  std::cerr << "bench: j. storing " << storing.bytes / (1 << 20)
            << " MiB of streamed pairs: synced batches, an SST per chunk, one SST\n";
  absl::StatusOr<StreamStoringMeasures> stored = MeasureStreamStoring(flags.directory + "/stream-storing", storing);
  if (!stored.ok()) return stored.status();
  results.storing = *stored;
  return absl::OkStatus();
}

// Phase t on two clusters of their own, with TLS and without.
absl::Status RunTlsPhase(const Flags& flags, Results& results) {
  auto clear = StartOurs(flags.directory + "/rf3-clear", 3, "charybdis", "", true);
  if (!clear.ok()) return clear.status();
  auto tls = StartOurs(flags.directory + "/rf3-tls", 3, "charybdis tls", "", true, TableNamed("kv"), true);
  if (!tls.ok()) return tls.status();
  TlsSizes sizes;
  if (flags.quick) {
    sizes.rounds = 4;
    sizes.puts_per_round = 200;
  }
  std::cerr << "bench: t. " << sizes.rounds << " rounds of " << sizes.puts_per_round
            << " QUORUM puts through CQL on each cluster, in turn\n";
  results.tls = RunTlsComparison(*tls->cql_client, *clear->cql_client, sizes);
  if (absl::Status stopped = tls->cluster->StopAll(); !stopped.ok()) return stopped;
  return clear->cluster->StopAll();
}

// Phase r on a cluster of its own: kv deletes may go once a repair began
// after them (no propagation delay: one machine, one clock), and no hints,
// so that only the repair brings node 3 what it missed.
absl::Status RunRepairPhase(const Flags& flags, Results& results) {
  Table kv = TableNamed("kv");
  kv.set_tombstone_gc("repair");
  kv.set_propagation_delay_seconds(0);
  auto ours = StartOurs(flags.directory + "/rf3-repair", 3, "charybdis", "max_hint_window_ms: 1\n", true, kv);
  if (!ours.ok()) return ours.status();
  RepairSizes sizes;
  if (flags.quick) {
    sizes.gc_rows = 20000;
    sizes.data_bytes = 8 << 20;
    sizes.window_seconds = 2;
    sizes.repair_timeout_seconds = 120;
  }
  absl::StatusOr<RepairMeasures> measures = RunRepair(*ours->cluster, *ours->client, sizes);
  if (!measures.ok()) return measures.status();
  results.repair = *std::move(measures);
  return ours->cluster->StopAll();
}

// Phase l on a cluster of its own: nothing else in its storage.
absl::Status RunBigPartitionPhase(const Flags& flags, Results& results) {
  auto ours = StartOurs(flags.directory + "/rf3-big-partition", 3, "charybdis", "", true);
  if (!ours.ok()) return ours.status();
  BigPartitionSizes& sizes = results.big_partition_sizes;
  if (flags.quick) {
    sizes.rows = 20000;
    sizes.rows_per_batch = 500;
    sizes.page_size = 1000;
    sizes.edge_pages = 5;
  }
  absl::StatusOr<BigPartitionMeasures> measures = RunBigPartition(ours->cluster->cql_address(1), sizes);
  if (!measures.ok()) return measures.status();
  results.big_partition = *std::move(measures);
  return ours->cluster->StopAll();
}

// Phase j's time from add to normal, and what it comes to for 1 GiB.
std::string JoinTimeLine(const JoinMeasures& join) {
  return absl::StrFormat(
      "j. node 4 from `cluster add` to UN: %.1f s with %.0f MiB loaded at RF=3 (%.0f MiB streamed to it); at this "
      "rate, about %.0f s for a node taking 1 GiB\n",
      join.join_seconds, join.data_bytes / 1048576.0, join.bytes_streamed / 1048576.0,
      join.bytes_streamed > 0 ? join.join_seconds * (1 << 30) / join.bytes_streamed : 0.0);
}

// Phase d at RF=1, beside a 1-member etcd.
absl::Status RunUnreplicated(const Flags& flags, const PhaseSizes& sizes, std::vector<PhaseRun>& runs) {
  auto etcd = StartEtcd(flags.directory + "/etcd-1", 1);
  if (!etcd.ok()) return etcd.status();
  const std::unique_ptr<BenchSystem> etcd_client = ConnectEtcd((*etcd)->client_address(0));
  auto ours = StartOurs(flags.directory + "/rf1-group", 1, "charybdis", "", true);
  if (!ours.ok()) return ours.status();
  auto naive = StartOurs(flags.directory + "/rf1-naive", 1, "charybdis naive", "disable_lwt_batching: true\n", false);
  if (!naive.ok()) return naive.status();
  Append(runs, RunLwtLoad({ours->client.get(), naive->client.get(), etcd_client.get()}, sizes, "group, RF=1", "rf1"));
  if (absl::Status stopped = naive->cluster->StopAll(); !stopped.ok()) return stopped;
  if (absl::Status stopped = ours->cluster->StopAll(); !stopped.ok()) return stopped;
  return (*etcd)->Stop();
}

constexpr char kHelp[] =
    "usage: ./charybdis bench real [--dir DIR] [--out PREFIX] [--phases abcdpqmjrtl] [--quick]\n"
    "Charybdis (3 nodes, RF=3, 2 shards each) beside etcd (3 members) on this machine, in one run.\n"
    "  --phases  a: sequential QUORUM put, get, IF NOT EXISTS (20k/20k/5k); b: 64 puts in flight\n"
    "            for 10 s; c: lock-step contention on one key (16/8/4 clients x 312); d: the LWT\n"
    "            load test (250 in flight into one partition, rows and batches of 50 and 1000,\n"
    "            RF=3 and RF=1, with the naive mode); p: phase a with commitlog_sync periodic\n"
    "            (and phase b, if b is asked for too);\n"
    "            q: phase a through CQL (prepared statements) beside our gRPC API, one cluster,\n"
    "            and 5k puts and gets through CQL at ONE, LOCAL_QUORUM, QUORUM and ALL;\n"
    "            m: our nodes' resident memory across 1M IF NOT EXISTS on fresh keys, 64 in\n"
    "            flight (goal: the end within 20% of halfway);\n"
    "            j: a fourth node joins a cluster loaded with 1 GiB at RF=3 while 4 clients put at\n"
    "            QUORUM and 2 run IF NOT EXISTS: its streaming beside this machine's sequential write\n"
    "            of the same bytes (goal >= 50%), put p99 (<= 2x) and LWT p50 (<= 1.5x) during the\n"
    "            join beside just before, and its time from add to UN\n"
    "            r: repair and tombstone GC on a cluster of their own: 1M rows written, deleted,\n"
    "            repaired and compacted (disk after <= 5% of its peak); 256 MiB loaded at RF=3, a\n"
    "            repair of replicas in agreement (sends < 0.1% of it, takes <= 2x a COUNT(*) at\n"
    "            ONE), QUORUM put p99 during a repair (<= 2x before), and a repair after node 3\n"
    "            missed 1% of the writes (sends <= 3x what it missed)\n"
    "            t: two clusters, TLS on the CQL port and between nodes and none, take 10 rounds\n"
    "            of 2000 sequential QUORUM puts through CQL in turn: p50 with TLS <= 1.15x without\n"
    "            l: paging through CQL through a partition of 1M rows, 5000 a page, at QUORUM: the\n"
    "            first 10 pages beside a partition of one page, the last 10 beside the first\n"
    "            (goals <= 1.5x: a page costs what it returns)\n"
    "            Phase a starts with this machine's floor: the loopback round trip and 3 fdatasyncs\n"
    "            at once, what a QUORUM put and an LWT cannot beat here\n"
    "  --out     writes PREFIX.json and PREFIX.svg (default bench-real)\n"
    "  --dir     where the clusters live while it runs (default a fresh one under /tmp)\n"
    "  --quick   small sizes (the test suite runs this)\n"
    "Prints a table of ratios (ours / etcd) on stdout and progress on stderr; exits 1 if a\n"
    "system broke a promise or served nothing. docs/benchmarks.md explains the figures.\n";

int Usage(const std::string& problem) {
  std::cerr << "charybdis-bench-real: " << problem << "\n" << kHelp;
  return 2;
}

// Every line of the table: the phases' comparisons, the machine's floor
// right after phase a's lines (which it bounds), phase m's memory.
std::vector<Comparison> AllComparisons(const Results& results) {
  std::vector<Comparison> comparisons = Compare(results.runs);
  if (results.floor) {
    auto after_a = std::find_if(comparisons.begin(), comparisons.end(),
                                [](const Comparison& c) { return c.title.rfind("a. ", 0) != 0; });
    const std::vector<Comparison> floors = FloorComparisons(*results.floor, results.runs);
    comparisons.insert(after_a, floors.begin(), floors.end());
  }
  if (auto memory = MemoryComparison(results.memory, "group, RF=3")) comparisons.push_back(*memory);
  if (results.join) {
    const std::vector<Comparison> join = JoinComparisons(*results.join);
    comparisons.insert(comparisons.end(), join.begin(), join.end());
  }
  if (results.storing) {
    const std::vector<Comparison> storing = StreamStoringComparisons(*results.storing);
    comparisons.insert(comparisons.end(), storing.begin(), storing.end());
  }
  if (results.repair) {
    const std::vector<Comparison> repair = RepairComparisons(*results.repair);
    comparisons.insert(comparisons.end(), repair.begin(), repair.end());
  }
  if (results.tls) comparisons.push_back(*results.tls);
  if (results.big_partition) {
    const std::vector<Comparison> big = BigPartitionComparisons(*results.big_partition, results.big_partition_sizes);
    comparisons.insert(comparisons.end(), big.begin(), big.end());
  }
  return comparisons;
}

// PREFIX.json (every run, comparison, memory sample and the floor) and
// PREFIX.svg (the chart).
void WriteReport(const std::string& prefix, const Results& results, const std::vector<Comparison>& comparisons) {
  nlohmann::json report = ReportJson(results.runs, comparisons);
  for (const MemorySample& sample : results.memory) {
    report["memory"].push_back({{"lwts", sample.lwts}, {"resident_bytes", sample.resident_bytes}});
  }
  if (const std::optional<MachineFloor>& floor = results.floor) {
    report["machine_floor"] = {{"loopback_round_trip_us", floor->loopback_round_trip_us},
                               {"fdatasync_us", floor->fdatasync_us},
                               {"fdatasync_writers", floor->sync_writers},
                               {"quorum_put_us", floor->quorum_put_us()},
                               {"lwt_us", floor->lwt_us()}};
  }
  if (const std::optional<JoinMeasures>& join = results.join) {
    report["join"] = {{"data_bytes", join->data_bytes},
                      {"bytes_streamed", join->bytes_streamed},
                      {"streaming_seconds", join->streaming_seconds},
                      {"join_seconds", join->join_seconds},
                      {"write_floor_bytes_per_second", join->write_floor_bytes_per_second},
                      {"put_p99_us_before", join->puts_before.p99_us()},
                      {"put_p99_us_during", join->puts_during.p99_us()},
                      {"lwt_p50_us_before", join->lwts_before.p50_us()},
                      {"lwt_p50_us_during", join->lwts_during.p50_us()}};
  }
  if (const std::optional<StreamStoringMeasures>& storing = results.storing) {
    report["stream_storing"] = {{"pairs", storing->pairs},
                                {"bytes", storing->bytes},
                                {"synced_batches_seconds", storing->batches_seconds},
                                {"sst_per_chunk_seconds", storing->sst_per_chunk_seconds},
                                {"one_sst_seconds", storing->one_sst_seconds}};
  }
  if (const std::optional<RepairMeasures>& repair = results.repair) {
    report["repair"] = {{"gc_peak_bytes", repair->gc_peak_bytes},
                        {"gc_after_bytes", repair->gc_after_bytes},
                        {"data_bytes", repair->data_bytes},
                        {"scan_seconds", repair->scan_seconds},
                        {"in_sync_seconds", repair->in_sync_seconds},
                        {"in_sync_bytes_sent", repair->in_sync_bytes_sent},
                        {"missed_bytes", repair->missed_bytes},
                        {"missed_bytes_sent", repair->missed_bytes_sent},
                        {"missed_seconds", repair->missed_seconds},
                        {"put_p99_us_before", repair->puts_before.p99_us()},
                        {"put_p99_us_during", repair->puts_during.p99_us()}};
  }
  if (const std::optional<BigPartitionMeasures>& big = results.big_partition) {
    report["big_partition"] = {{"rows", big->rows},
                               {"page_size", results.big_partition_sizes.page_size},
                               {"load_seconds", big->load_seconds},
                               {"small_partition_ms", big->small_partition_ms},
                               {"page_ms", big->page_ms}};
  }
  std::ofstream(prefix + ".json") << report.dump(2) << "\n";
  std::ofstream(prefix + ".svg") << RatioChartSvg(comparisons);
  std::cerr << "bench: wrote " << prefix << ".json and " << prefix << ".svg\n";
}

int Main(int argc, char** argv) {
  SkipMutexDeadlockDetection();
  Flags flags;
  for (int i = 1; i < argc; i++) {
    const std::string word = argv[i];
    const bool has_value = i + 1 < argc;
    if (word == "--quick") flags.quick = true;
    else if (word == "--dir" && has_value) flags.directory = argv[++i];
    else if (word == "--out" && has_value) flags.out = argv[++i];
    else if (word == "--phases" && has_value) flags.phases = argv[++i];
    else if (word == "--help" || word == "-h") {
      std::cout << kHelp;
      return 0;
    }
    else return Usage(absl::StrCat("unknown argument ", word));
  }
  if (flags.phases.find_first_not_of("abcdpqmjrtl") != std::string::npos || flags.phases.empty()) {
    return Usage("--phases takes letters of abcdpqmjrtl");
  }
  if (flags.directory.empty()) flags.directory = fs::temp_directory_path() / absl::StrCat("charybdis-bench-", getpid());
  if (fs::exists(flags.directory) && !fs::is_empty(flags.directory)) {
    return Usage(absl::StrCat(flags.directory, " is not empty"));
  }
  KillChildrenOnInterrupt();  // ^C stops both clusters, not only us
  std::cerr << "bench: clusters under " << flags.directory << " (^C stops them)\n";
  const PhaseSizes sizes = flags.quick ? QuickSizes() : PhaseSizes();
  Results results;
  const std::vector<PhaseRun>& runs = results.runs;
  // Phases j, r, t and l need neither etcd nor the phases' cluster.
  absl::Status status = flags.phases.find_first_not_of("jrtl") == std::string::npos
                            ? absl::OkStatus()
                            : RunReplicated(flags, sizes, results);
  if (status.ok() && Has(flags, 'd')) status = RunUnreplicated(flags, sizes, results.runs);
  if (status.ok() && Has(flags, 'j')) status = RunJoinPhase(flags, results);
  if (status.ok() && Has(flags, 'r')) status = RunRepairPhase(flags, results);
  if (status.ok() && Has(flags, 't')) status = RunTlsPhase(flags, results);
  if (status.ok() && Has(flags, 'l')) status = RunBigPartitionPhase(flags, results);
  if (!status.ok()) {
    std::cerr << "charybdis-bench-real: " << status << "\n(clusters are under " << flags.directory << ")\n";
    return 1;
  }
  const std::vector<Comparison> comparisons = AllComparisons(results);
  std::cout << ComparisonTable(comparisons);
  if (results.join) std::cout << JoinTimeLine(*results.join);
  WriteReport(flags.out, results, comparisons);
  int broken = 0;
  for (const PhaseRun& run : runs) {
    // The naive mode may time out every request of the LWT load test: that
    // is what it shows. Anything else that serves nothing is broken.
    if (run.result.ok == 0 && run.system.find("naive") == std::string::npos) {
      std::cerr << "FAILED " << run.system << ", " << run.measure << " (" << run.mode << "): no request succeeded\n";
      broken++;
    }
    for (const auto& [kind, count] : run.result.errors) {
      if (!IsCheckFailure(kind)) continue;
      std::cerr << "FAILED CHECK " << run.system << ", " << run.measure << " (" << run.mode << "): " << kind
                << " x" << count << "\n";
      broken++;
    }
  }
  fs::remove_all(flags.directory);
  return broken == 0 ? 0 : 1;
}

}  // namespace
}  // namespace charybdis::node

int main(int argc, char** argv) { return charybdis::node::Main(argc, argv); }
