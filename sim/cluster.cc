#include "sim/cluster.h"

#include "core/schema/bootstrap.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/env/assert.h"
#include "core/topology/placement.h"

namespace charybdis::sim {

namespace {

std::vector<std::vector<scenario::Latency>> LatencyMatrix(const Topology& topology,
                                                          const scenario::NetworkProfile& profile) {
  const size_t count = topology.datacenters.size();
  std::vector<std::vector<scenario::Latency>> matrix(count);
  for (size_t from = 0; from < count; from++) {
    for (size_t to = 0; to < count; to++) {
      matrix[from].push_back(from == to ? profile.intra_dc() : profile.inter_dc());
    }
  }
  for (const auto& link : profile.link()) {
    const int from = topology.DatacenterIndex(link.from_dc());
    const int to = topology.DatacenterIndex(link.to_dc());
    CHARYBDIS_ASSERT(from >= 0);
    CHARYBDIS_ASSERT(to >= 0);
    matrix[from][to] = link.latency();
  }
  return matrix;
}

CoordinatorOptions CoordinatorOptionsOf(const scenario::CoordinatorConfig& config) {
  CoordinatorOptions options;
  if (config.write_timeout_ms()) options.write_timeout = config.write_timeout_ms() * kMillisecond;
  if (config.read_timeout_ms()) options.read_timeout = config.read_timeout_ms() * kMillisecond;
  if (config.speculative_retry_percentile() > 0) {
    options.speculative_retry_percentile = config.speculative_retry_percentile();
  }
  if (config.disable_speculative_retry()) options.speculative_retry_percentile = 0;
  options.hinted_handoff = !config.disable_hinted_handoff();
  if (config.max_hint_window_ms()) options.max_hint_window = config.max_hint_window_ms() * kMillisecond;
  if (config.hint_replay_parallelism()) options.hint_replay_parallelism = config.hint_replay_parallelism();
  options.lwt_batching = !config.disable_lwt_batching();
  if (config.hint_replay_interval_ms()) {
    options.hint_replay_interval = config.hint_replay_interval_ms() * kMillisecond;
  }
  return options;
}

NodeClock DrawClock(const scenario::ClockProfile& profile, Random& random) {
  const auto max_offset = static_cast<int64_t>(profile.max_offset_ms()) * kMillisecond;
  const auto max_drift = static_cast<int64_t>(profile.max_drift_ppm());
  return NodeClock(random.Between(-max_offset, max_offset),
                   static_cast<int32_t>(random.Between(-max_drift, max_drift)));
}

// The scenario's tables as every node's config holds them.
std::map<std::string, TableSchema> TablesOf(const scenario::Schema& schema) {
  std::map<std::string, TableSchema> tables;
  for (const auto& table : schema.table()) {
    TableSchema& config = tables[table.name()];
    config.name = table.name();
    config.columns = std::set<std::string>(table.column().begin(), table.column().end());
    const absl::StatusOr<TombstoneGc> gc = TombstoneGcOf(
        table.tombstone_gc(), table.has_gc_grace_seconds() ? std::optional<uint32_t>(table.gc_grace_seconds()) : std::nullopt,
        table.has_propagation_delay_seconds() ? std::optional<uint32_t>(table.propagation_delay_seconds()) : std::nullopt);
    CHARYBDIS_ASSERT(gc.ok());  // the validator checks the mode
    config.gc = *gc;
  }
  return tables;
}

}  // namespace

Cluster::Cluster(Simulator& simulator, const LoadedScenario& scenario, Random random,
                 SimBuggify& buggify, Probes* probes)
    : simulator_(simulator),
      topology_(scenario.topology),
      random_(random),
      network_(simulator, random.Fork(1), LatencyMatrix(topology_, scenario.spec.network()),
               scenario.spec.network().intra_node(), scenario.spec.network().wire_roundtrip()) {
  const auto& spec = scenario.spec;
  network_.set_faults(MessageFaults{spec.network().loss(), spec.network().duplicate(),
                                    spec.network().reorder()});
  FailureDetectorOptions detector;
  detector.heartbeat_interval = spec.failure_detector().heartbeat_interval_ms() * kMillisecond;
  detector.convict_after = spec.failure_detector().convict_after_ms() * kMillisecond;
  ring_ = std::make_shared<const TokenRing>(LayoutOf(topology_, spec, random.Fork(3).Next()));
  const std::map<std::string, TableSchema> tables = TablesOf(spec.schema());
  // The CQL schema the nodes start with; their shards know its storage
  // tables (core/schema/schema_log.h).
  const auto& cql = spec.schema().cql();
  cql::BootstrapSchema bootstrap = cql::BuildBootstrapSchema({cql.begin(), cql.end()}, cql::DatacentersOf(ring_->layout()));
  CHARYBDIS_ASSERT(bootstrap.problems.empty());  // the scenario loader reports them
  Random clocks = random.Fork(2);
  NodeConfig common;
  common.shards = topology_.shards_per_node;
  common.failure_detector = detector;
  common.ring = ring_;
  common.tables = tables;
  common.cql_bootstrap = bootstrap.schema;
  common.coordinator = CoordinatorOptionsOf(spec.coordinator());
  if (spec.disable_read_cache()) common.read_cache_bytes = 0;
  if (spec.compaction_interval_ms()) common.compaction_interval = spec.compaction_interval_ms() * kMillisecond;
  // Which dead member each new node replaces, as its config would say.
  std::map<NodeId, NodeId> replaces;
  for (const auto& workload : spec.workload()) {
    for (const auto& operation : workload.operations().operation()) {
      if (operation.kind() == "replace") replaces[operation.node()] = operation.replaced();
    }
  }
  // The members, then the new nodes: their hosts follow in id order.
  for (const std::vector<NodePlacement>* placements : {&topology_.nodes, &topology_.new_nodes}) {
    for (const NodePlacement& placement : *placements) {
      NodeConfig config = common;
      config.id = placement.id;
      for (const NodePlacement& peer : topology_.nodes) {
        if (peer.id != placement.id) config.peers.push_back(peer.id);
      }
      if (placements == &topology_.new_nodes) {
        config.new_node = NewNode{.datacenter = topology_.datacenters[placement.datacenter],
                                  .rack = placement.rack,
                                  .replaces = replaces.count(placement.id) ? replaces.at(placement.id) : 0};
      }
      const uint32_t host = simulator.AddHost();
      CHARYBDIS_ASSERT(SimNetwork::NodeOf(host) == placement.id);
      network_.AddHost(placement.datacenter, topology_.shards_per_node);
      nodes_.push_back(std::make_unique<SimNode>(simulator, network_, buggify,
                                                 probes != nullptr ? *probes : *NoProbes::Instance(),
                                                 std::move(config), host, random.Fork(100 + placement.id),
                                                 spec.storage(), DrawClock(spec.clocks(), clocks)));
    }
  }
}

void Cluster::StartAll() {
  for (auto& node : nodes_) {
    if (!node->config().new_node) node->Start();
  }
}

void Cluster::StartNewNode(NodeId id) {
  SimNode& target = node(id);
  CHARYBDIS_ASSERT(target.config().new_node.has_value());
  if (target.starts() > 0) return;
  const NodeId replaces = target.config().new_node->replaces;
  Log(absl::StrCat("start new node ", id, replaces != 0 ? absl::StrCat(" (it replaces node ", replaces, ")") : " (it asks to join)"));
  target.Start();
}

NodeId Cluster::AddClient(uint32_t datacenter) {
  const uint32_t host = simulator_.AddHost();
  network_.AddHost(datacenter, 1);
  return SimNetwork::NodeOf(host);
}

uint32_t Cluster::nodes_down() const {
  uint32_t down = 0;
  for (const auto& node : nodes_) down += node->starts() > 0 && (!node->running() || node->paused());
  return down;
}

void Cluster::Log(const std::string& what) {
  fault_log_.push_back(absl::StrCat(simulator_.now() / kMillisecond, "ms ", what));
}

void Cluster::Crash(NodeId id, CrashKind kind) {
  if (!node(id).running()) return;
  Log(absl::StrCat(kind == CrashKind::kPowerCut ? "power cut of node " : "crash node ", id));
  health_.Open(id, HealthLog::Cause::kDown, simulator_.now());
  node(id).Crash(kind);
}

void Cluster::ArmCrashPoint(NodeId id, CrashPoint point) {
  if (!node(id).running()) return;
  const std::string name = scenario::CrashPointFault::Point_Name(point.point);
  Log(absl::StrCat("crash point ", name, " armed on node ", id,
                   point.kind == CrashKind::kPowerCut ? " (power cut)" : ""));
  point.fire = [this, id, name, kind = point.kind, then = std::move(point.fire)] {
    if (!node(id).running()) return;
    Log(absl::StrCat("crash point ", name, " reached on node ", id));
    Crash(id, kind);
    if (then) then();
  };
  node(id).ArmCrashPoint(std::move(point));
}

void Cluster::Restart(NodeId id) {
  // A new node not yet started is the operations workload's to start.
  if (node(id).running() || node(id).starts() == 0) return;
  Log(absl::StrCat("restart node ", id));
  node(id).Start();
  // A node paused when it crashed comes back running.
  health_.Close(id, HealthLog::Cause::kDown, simulator_.now());
  health_.Close(id, HealthLog::Cause::kPaused, simulator_.now());
}

void Cluster::Pause(NodeId id, Nanos duration) {
  SimNode& target = node(id);
  if (!target.running() || target.paused()) return;
  Log(absl::StrCat("pause node ", id, " for ", duration / kMillisecond, "ms"));
  health_.Open(id, HealthLog::Cause::kPaused, simulator_.now());
  target.Pause();
  const uint64_t life = target.starts();
  simulator_.Schedule(simulator_.now() + duration,
                      EventTag{EventKind::kFault, target.host(), 0, 1}, /*bound=*/false,
                      [this, id, life] {
                        if (node(id).starts() == life) Resume(id);
                      });
}

void Cluster::Resume(NodeId id) {
  if (!node(id).paused()) return;
  Log(absl::StrCat("resume node ", id));
  node(id).Resume();
  health_.Close(id, HealthLog::Cause::kPaused, simulator_.now());
}

void Cluster::Partition(const std::vector<NodeId>& side_a, const std::vector<NodeId>& side_b,
                        bool one_way) {
  Log(absl::StrCat("partition [", absl::StrJoin(side_a, ","), "] ", one_way ? "->" : "<->",
                   " [", absl::StrJoin(side_b, ","), "]"));
  for (const std::vector<NodeId>* side : {&side_a, &side_b}) {
    for (NodeId id : *side) health_.Open(id, HealthLog::Cause::kPartitioned, simulator_.now());
  }
  for (NodeId a : side_a) {
    for (NodeId b : side_b) {
      network_.Block(SimNetwork::HostOf(a), SimNetwork::HostOf(b));
      if (!one_way) network_.Block(SimNetwork::HostOf(b), SimNetwork::HostOf(a));
    }
  }
}

void Cluster::Heal() {
  Log("heal partitions and clogs");
  for (NodeId id = 1; id <= size(); id++) health_.Close(id, HealthLog::Cause::kPartitioned, simulator_.now());
  network_.HealPartitions();
  network_.Unclog();
}

void Cluster::Clog(NodeId id, Nanos duration) {
  Log(absl::StrCat("clog node ", id, " for ", duration / kMillisecond, "ms"));
  health_.Add(id, simulator_.now(), simulator_.now() + duration);
  network_.Clog(node(id).host(), simulator_.now() + duration);
}

void Cluster::SkewClock(NodeId id, Nanos step, int32_t drift_ppm) {
  Log(absl::StrCat("clock of node ", id, " steps ", step / kMillisecond, "ms, drift ",
                   drift_ppm, "ppm"));
  node(id).clock().Adjust(simulator_.now(), step, drift_ppm);
}

void Cluster::FailDisk(NodeId id, DiskFaults faults, Nanos duration) {
  Log(absl::StrCat("disk of node ", id, faults.fail_reads ? " fails reads" : "",
                   faults.fail_writes ? " fails writes" : "", " +",
                   faults.extra_latency / kMicrosecond, "us for ", duration / kMillisecond, "ms"));
  node(id).set_disk_faults(faults);
  health_.Add(id, simulator_.now(), simulator_.now() + duration);
  // Only the latest disk fault of a node may end it.
  const uint64_t epoch = ++disk_fault_epochs_[id];
  simulator_.Schedule(simulator_.now() + duration,
                      EventTag{EventKind::kFault, node(id).host(), 0, 2}, /*bound=*/false,
                      [this, id, epoch] {
                        if (disk_fault_epochs_[id] == epoch) node(id).set_disk_faults(DiskFaults{});
                      });
}

topology::Topology Cluster::NewestTopology() const {
  const SimNode* newest = nullptr;
  for (const auto& node : nodes_) {
    if (!node->running()) continue;
    if (newest == nullptr || node->TopologyLog().sequence() > newest->TopologyLog().sequence()) newest = node.get();
  }
  if (newest == nullptr) return topology::Topology::Bootstrap(topology::MembersOfRing(*ring_));
  return newest->TopologyLog().topology();
}

std::shared_ptr<const TokenRing> Cluster::OwnersRing() const {
  const topology::Topology newest = NewestTopology();
  if (newest.version() == 1) return ring_;  // the bootstrap topology is the static ring's
  return topology::Placement(newest, ring_->layout().replication, ring_->layout().shards_per_node).now();
}

}  // namespace charybdis::sim
