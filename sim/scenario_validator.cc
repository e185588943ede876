#include "sim/scenario_validator.h"

#include <initializer_list>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/env/commitlog_sync.h"
#include "core/request/consistency.h"
#include "core/telemetry/metrics.h"
#include "core/paxos/ballot.h"
#include "core/env/probe.h"
#include "core/tools/text_proto.h"
#include "core/data/tombstone_gc.h"
#include "core/workload/fault_kinds.h"
#include "sim/envelope_kinds.h"
#include "sim/history_checks.h"
#include "sim/topology.h"

namespace charybdis::sim {

namespace {

using google::protobuf::TextFormat;

bool IsProbability(double p) { return p >= 0 && p <= 1; }

class Validator {
 public:
  Validator(const std::string& path, const scenario::Scenario& spec,
            const TextFormat::ParseInfoTree& locations)
      : spec_(spec), problems_(path, scenario::Scenario::descriptor(), locations), topology_(Topology::From(spec.topology())) {}

  std::string Run() {
    if (spec_.time_limit_ms() == 0) {
      problems_.Add({{"time_limit_ms"}}, "must be set to a positive number of milliseconds");
    }
    CheckTopology();
    if (!topology_.nodes.empty()) {
      CheckReplication();
      CheckNetwork();
      CheckFailureDetector();
      CheckWorkloads();
      CheckFaults();
      CheckRandomFaults();
      CheckSettle();
      CheckSchema();
      CheckCoordinator();
      CheckStorage();
      CheckDataChecks();
      CheckAvailability();
    }
    return problems_.text();
  }

 private:
  void CheckTopology() {
    const auto& topology = spec_.topology();
    if (topology.datacenter_size() == 0) {
      problems_.Add({{"topology"}, {"datacenter"}}, "at least one datacenter is needed");
    }
    if (topology.shards_per_node() == 0 || topology.shards_per_node() > BallotLayout::kMaxShards) {
      problems_.Add({{"topology"}, {"shards_per_node"}},
                    absl::StrCat("must be between 1 and ", BallotLayout::kMaxShards));
    }
    std::set<std::string> names;
    for (int d = 0; d < topology.datacenter_size(); d++) {
      const auto& datacenter = topology.datacenter(d);
      if (datacenter.name().empty()) {
        problems_.Add({{"topology"}, {"datacenter", d}, {"name"}}, "a datacenter needs a name");
      } else if (!names.insert(datacenter.name()).second) {
        problems_.Add({{"topology"}, {"datacenter", d}, {"name"}},
                      absl::StrCat("datacenter \"", datacenter.name(), "\" is declared twice"));
      }
      if (datacenter.rack_size() == 0) {
        problems_.Add({{"topology"}, {"datacenter", d}, {"rack"}}, "a datacenter needs a rack");
      }
      for (int r = 0; r < datacenter.rack_size(); r++) {
        if (datacenter.rack(r).nodes() == 0 && datacenter.rack(r).new_nodes() == 0) {
          problems_.Add({{"topology"}, {"datacenter", d}, {"rack", r}, {"nodes"}},
                        "a rack needs at least one node (or new node)");
        }
      }
    }
    // Far below what ballots can name (BallotLayout::kMaxNodeId).
    static_assert(1000 <= BallotLayout::kMaxNodeId);
    if (topology_.nodes.size() + topology_.new_nodes.size() > 1000) {
      problems_.Add({{"topology"}}, "at most 1000 nodes can be simulated");
    }
  }

  void CheckReplication() {
    const auto& replication = spec_.topology().replication();
    const size_t nodes = topology_.nodes.size();
    if (replication.strategy() == scenario::Replication::SIMPLE) {
      if (replication.datacenter_size() > 0) {
        problems_.Add({{"topology"}, {"replication"}, {"datacenter", 0}},
                      "SimpleStrategy takes replication_factor, not per-datacenter factors");
      }
      if (replication.replication_factor() == 0 || replication.replication_factor() > nodes) {
        problems_.Add({{"topology"}, {"replication"}, {"replication_factor"}},
                      absl::StrCat("replication factor ", replication.replication_factor(),
                                   " must be between 1 and the ", nodes, " nodes of the cluster"));
      }
      return;
    }
    if (replication.replication_factor() != 0) {
      problems_.Add({{"topology"}, {"replication"}, {"replication_factor"}},
                    "NetworkTopologyStrategy takes a replication factor per datacenter");
    }
    if (replication.datacenter_size() == 0) {
      problems_.Add({{"topology"}, {"replication"}},
                    "give a replication factor for at least one datacenter");
    }
    std::set<std::string> seen;
    for (int i = 0; i < replication.datacenter_size(); i++) {
      const auto& entry = replication.datacenter(i);
      const int index = topology_.DatacenterIndex(entry.name());
      if (index < 0) {
        problems_.Add({{"topology"}, {"replication"}, {"datacenter", i}, {"name"}},
                      absl::StrCat("no datacenter is named \"", entry.name(), "\""));
        continue;
      }
      if (!seen.insert(entry.name()).second) {
        problems_.Add({{"topology"}, {"replication"}, {"datacenter", i}, {"name"}},
                      absl::StrCat("datacenter \"", entry.name(), "\" is given twice"));
      }
      const uint32_t available = topology_.NodesIn(index);
      if (entry.replication_factor() == 0 || entry.replication_factor() > available) {
        problems_.Add({{"topology"}, {"replication"}, {"datacenter", i}, {"replication_factor"}},
                      absl::StrCat("replication factor ", entry.replication_factor(),
                                   " for datacenter \"", entry.name(), "\" must be between 1 and its ",
                                   available, " nodes"));
      }
    }
  }

  void CheckDatacenterName(std::initializer_list<FieldStep> steps, const std::string& name) {
    if (topology_.DatacenterIndex(name) < 0) {
      problems_.Add(steps, absl::StrCat("no datacenter is named \"", name, "\""));
    }
  }

  void CheckNetwork() {
    const auto& network = spec_.network();
    for (int i = 0; i < network.link_size(); i++) {
      CheckDatacenterName({{"network"}, {"link", i}, {"from_dc"}}, network.link(i).from_dc());
      CheckDatacenterName({{"network"}, {"link", i}, {"to_dc"}}, network.link(i).to_dc());
    }
    if (!IsProbability(network.loss())) problems_.Add({{"network"}, {"loss"}}, "must be in [0, 1]");
    if (!IsProbability(network.duplicate())) {
      problems_.Add({{"network"}, {"duplicate"}}, "must be in [0, 1]");
    }
    if (!IsProbability(network.reorder())) {
      problems_.Add({{"network"}, {"reorder"}}, "must be in [0, 1]");
    }
    if (spec_.clocks().max_drift_ppm() > 100'000) {
      problems_.Add({{"clocks"}, {"max_drift_ppm"}}, "at most 100000 (10%)");
    }
  }

  void CheckFailureDetector() {
    const auto& detector = spec_.failure_detector();
    const uint64_t interval = detector.heartbeat_interval_ms() ? detector.heartbeat_interval_ms()
                                                               : kDefaultHeartbeatIntervalMs;
    const uint64_t convict =
        detector.convict_after_ms() ? detector.convict_after_ms() : kDefaultConvictAfterMs;
    if (convict <= interval) {
      problems_.Add({{"failure_detector"}, {"convict_after_ms"}},
                    absl::StrCat("must exceed the heartbeat interval (", interval, " ms)"));
    }
  }

  void CheckWorkloads() {
    std::set<std::string> names;
    for (int w = 0; w < spec_.workload_size(); w++) {
      const auto& workload = spec_.workload(w);
      if (workload.name().empty()) {
        problems_.Add({{"workload", w}, {"name"}}, "a workload needs a name");
      } else if (!names.insert(workload.name()).second) {
        problems_.Add({{"workload", w}, {"name"}},
                      absl::StrCat("workload \"", workload.name(), "\" is declared twice"));
      }
      switch (workload.kind_case()) {
        case scenario::Workload::kPing:
          CheckPing(w, workload.ping());
          break;
        case scenario::Workload::kKv:
          CheckKv(w, workload.kv());
          break;
        case scenario::Workload::kCql:
          CheckCql(w, workload.cql());
          break;
        case scenario::Workload::kTopology:
          CheckTopology(w, workload.topology());
          break;
        case scenario::Workload::kOperations:
          CheckOperations(w, workload.operations());
          break;
        case scenario::Workload::kPermissions:
          // Its keyspace has three replicas: with fewer nodes its setup
          // fails, and its check says why.
          break;
        case scenario::Workload::KIND_NOT_SET:
          problems_.Add({{"workload", w}},
                        "say which kind of workload this is (ping, kv, cql, topology, operations, permissions)");
          break;
      }
      if (!workload.after().empty() && !names.count(workload.after())) {
        problems_.Add({{"workload", w}, {"after"}},
                      absl::StrCat("no workload named \"", workload.after(),
                                   "\" is declared before this one"));
      }
      if (workload.after() == workload.name() && !workload.name().empty()) {
        problems_.Add({{"workload", w}, {"after"}}, "a workload cannot wait for itself");
      }
    }
  }

  void CheckPing(int w, const scenario::PingWorkload& ping) {
    if (ping.clients() == 0) problems_.Add({{"workload", w}, {"ping"}, {"clients"}}, "must be at least 1");
    if (ping.requests_per_client() == 0) {
      problems_.Add({{"workload", w}, {"ping"}, {"requests_per_client"}}, "must be at least 1");
    }
    if (ping.timeout_ms() == 0) {
      problems_.Add({{"workload", w}, {"ping"}, {"timeout_ms"}}, "must be at least 1");
    }
    if (!ping.datacenter().empty()) {
      CheckDatacenterName({{"workload", w}, {"ping"}, {"datacenter"}}, ping.datacenter());
    }
    if (ping.start_ms() >= spec_.time_limit_ms()) {
      problems_.Add({{"workload", w}, {"ping"}, {"start_ms"}}, "starts after the time limit");
    }
  }

  void CheckTopology(int w, const scenario::TopologyWorkload& topology) {
    if (topology.operators() == 0) {
      problems_.Add({{"workload", w}, {"topology"}, {"operators"}}, "must be at least 1");
    }
    if (topology.changes_per_operator() == 0) {
      problems_.Add({{"workload", w}, {"topology"}, {"changes_per_operator"}}, "must be at least 1");
    }
    if (topology.start_ms() >= spec_.time_limit_ms()) {
      problems_.Add({{"workload", w}, {"topology"}, {"start_ms"}}, "starts after the time limit");
    }
    uint32_t nodes = 0;
    for (const auto& datacenter : spec_.topology().datacenter()) {
      for (const auto& rack : datacenter.rack()) nodes += rack.nodes();
    }
    if (nodes < 3) {
      problems_.Add({{"workload", w}, {"topology"}}, "needs at least 3 nodes (the last one may leave)");
    }
  }

  void CheckOperations(int w, const scenario::OperationsWorkload& operations) {
    if (operations.operation_size() == 0) {
      problems_.Add({{"workload", w}, {"operations"}}, "name at least one operation");
    }
    const auto nodes = static_cast<uint32_t>(topology_.nodes.size());
    const auto all_nodes = static_cast<uint32_t>(nodes + topology_.new_nodes.size());
    std::set<uint32_t> joined;
    for (int i = 0; i < operations.operation_size(); i++) {
      const auto& operation = operations.operation(i);
      const bool remove = operation.kind() == "removenode";
      if (operation.kind() == "join" || operation.kind() == "replace") {
        CheckJoin(w, i, operation, nodes, all_nodes, joined);
        continue;
      }
      const bool asked_until_ok =
          operation.kind() == "cleanup" || operation.kind() == "alter" || operation.kind() == "repair" ||
          operation.kind() == "compact";
      if (operation.kind() != "decommission" && operation.kind() != "kill" && !asked_until_ok && !remove) {
        problems_.Add({{"workload", w}, {"operations"}, {"operation", i}, {"kind"}},
                      "must be \"join\", \"replace\", \"decommission\", \"removenode\", \"kill\", \"cleanup\", \"repair\", \"compact\" or \"alter\"");
      }
      if ((operation.kind() == "alter") != !operation.statement().empty()) {
        problems_.Add({{"workload", w}, {"operations"}, {"operation", i}, {"statement"}},
                      "an alter, and only an alter, names its statement");
      }
      if (operation.node() < 1 || operation.node() > all_nodes) {
        problems_.Add({{"workload", w}, {"operations"}, {"operation", i}, {"node"}}, absl::StrCat("must be a node of the scenario, 1 to ", all_nodes));
      }
      if ((operation.kind() == "kill" || asked_until_ok) && operation.driver() != 0) {
        problems_.Add({{"workload", w}, {"operations"}, {"operation", i}, {"driver"}},
                      absl::StrCat("a ", operation.kind(), " has no driver"));
      } else if (operation.driver() > all_nodes || (remove && (operation.driver() == 0 || operation.driver() == operation.node()))) {
        problems_.Add({{"workload", w}, {"operations"}, {"operation", i}, {"driver"}},
                      remove ? "a removenode needs a live driver other than the node removed"
                             : absl::StrCat("must be a node of the scenario, 1 to ", all_nodes, ", or 0 for the node itself"));
      }
      if (operation.at_ms() >= spec_.time_limit_ms()) {
        problems_.Add({{"workload", w}, {"operations"}, {"operation", i}, {"at_ms"}}, "starts after the time limit");
      }
    }
  }

  // A join or a replace names a new node (Rack.new_nodes), each once, and
  // no driver: its node drives it. A replace names a member on the new
  // node's rack.
  void CheckJoin(int w, int i, const scenario::OperationsWorkload::Operation& operation, uint32_t nodes,
                 uint32_t all_nodes, std::set<uint32_t>& joined) {
    if (operation.node() <= nodes || operation.node() > all_nodes) {
      problems_.Add({{"workload", w}, {"operations"}, {"operation", i}, {"node"}},
                    all_nodes == nodes ? "a join needs a new node: give a rack new_nodes"
                                       : absl::StrCat("must be a new node of the scenario, ", nodes + 1, " to ", all_nodes));
    } else if (!joined.insert(operation.node()).second) {
      problems_.Add({{"workload", w}, {"operations"}, {"operation", i}, {"node"}},
                    absl::StrCat("node ", operation.node(), " joins once"));
    }
    if (operation.driver() != 0) {
      problems_.Add({{"workload", w}, {"operations"}, {"operation", i}, {"driver"}},
                    absl::StrCat("a ", operation.kind(), " is driven by its new node: leave it 0"));
    }
    const bool replace = operation.kind() == "replace";
    if (!replace && operation.replaced() != 0) {
      problems_.Add({{"workload", w}, {"operations"}, {"operation", i}, {"replaced"}}, "only a replace replaces a node");
    }
    if (replace && (operation.replaced() < 1 || operation.replaced() > nodes)) {
      problems_.Add({{"workload", w}, {"operations"}, {"operation", i}, {"replaced"}},
                    absl::StrCat("must be a member of the scenario, 1 to ", nodes));
    } else if (replace && operation.node() > nodes && operation.node() <= all_nodes) {
      const NodePlacement& dead = topology_.nodes[operation.replaced() - 1];
      const NodePlacement& fresh = topology_.new_nodes[operation.node() - nodes - 1];
      if (dead.datacenter != fresh.datacenter || dead.rack != fresh.rack) {
        problems_.Add({{"workload", w}, {"operations"}, {"operation", i}, {"node"}},
                      absl::StrCat("a replacement stands where the node it replaces stood: node ", operation.node(),
                                   " is not on node ", operation.replaced(), "'s rack"));
      }
    }
    if (operation.at_ms() >= spec_.time_limit_ms()) {
      problems_.Add({{"workload", w}, {"operations"}, {"operation", i}, {"at_ms"}}, "starts after the time limit");
    }
  }

  void CheckCql(int w, const scenario::CqlWorkload& cql) {
    if (cql.clients() == 0) problems_.Add({{"workload", w}, {"cql"}, {"clients"}}, "must be at least 1");
    if (cql.operations_per_client() == 0) {
      problems_.Add({{"workload", w}, {"cql"}, {"operations_per_client"}}, "must be at least 1");
    }
    for (const auto& [field, value] : {std::pair{"serial_read_fraction", cql.serial_read_fraction()},
                                       std::pair{"batch_fraction", cql.batch_fraction()},
                                       std::pair{"ttl_fraction", cql.ttl_fraction()},
                                       std::pair{"logged_batch_fraction", cql.logged_batch_fraction()},
                                       std::pair{"plain_fraction", cql.plain_fraction()},
                                       std::pair{"prepared_fraction", cql.prepared_fraction()},
                                       std::pair{"scan_fraction", cql.scan_fraction()}}) {
      if (!IsProbability(value)) problems_.Add({{"workload", w}, {"cql"}, {field}}, "must be in [0, 1]");
    }
    for (const auto& [field, value] : {std::pair{"partitions", cql.partitions()},
                                       std::pair{"rows_per_partition", cql.rows_per_partition()}}) {
      if (value == 0) problems_.Add({{"workload", w}, {"cql"}, {field}}, "must be at least 1");
    }
    if (cql.plain_fraction() > 0 && cql.plain_partitions() == 0) {
      problems_.Add({{"workload", w}, {"cql"}, {"plain_partitions"}}, "plain operations need at least 1");
    }
    if (cql.serial_read_fraction() + cql.batch_fraction() > 1 + 1e-9) {
      problems_.Add({{"workload", w}, {"cql"}, {"batch_fraction"}},
                    "serial reads and batches together exceed every operation");
    }
    if (cql.ttl_fraction() > 0 && cql.max_ttl_seconds() == 0) {
      problems_.Add({{"workload", w}, {"cql"}, {"max_ttl_seconds"}}, "TTLs need a maximum of at least 1");
    }
    const auto serial = static_cast<charybdis::ConsistencyLevel>(cql.serial_consistency());
    if (serial != charybdis::CL_UNSET && !charybdis::IsSerial(serial)) {
      problems_.Add({{"workload", w}, {"cql"}, {"serial_consistency"}}, "must be CL_SERIAL or CL_LOCAL_SERIAL");
    }
    if (cql.start_ms() >= spec_.time_limit_ms()) {
      problems_.Add({{"workload", w}, {"cql"}, {"start_ms"}}, "starts after the time limit");
    }
  }

  const scenario::Table* FindTable(const std::string& name) const {
    for (const auto& table : spec_.schema().table()) {
      if (table.name() == name) return &table;
    }
    return nullptr;
  }

  void CheckKv(int w, const scenario::KvWorkload& kv) {
    if (kv.clients() == 0) problems_.Add({{"workload", w}, {"kv"}, {"clients"}}, "must be at least 1");
    const bool sweep = kv.sweep_keys() || kv.preload_keys();
    if (kv.sweep_keys() && kv.preload_keys()) {
      problems_.Add({{"workload", w}, {"kv"}, {"preload_keys"}}, "a workload either sweeps or preloads");
    }
    for (int i = 0; i < kv.coordinator_size(); i++) {
      CheckNode({{"workload", w}, {"kv"}, {"coordinator", i}}, kv.coordinator(i));
    }
    if (kv.operations_per_client() == 0 && !sweep) {
      problems_.Add({{"workload", w}, {"kv"}, {"operations_per_client"}}, "must be at least 1");
    }
    const scenario::Table* table = FindTable(kv.table());
    if (table == nullptr) {
      problems_.Add({{"workload", w}, {"kv"}, {"table"}},
                    absl::StrCat("no table named \"", kv.table(), "\" in the schema"));
    }
    if (!IsProbability(kv.read_fraction())) {
      problems_.Add({{"workload", w}, {"kv"}, {"read_fraction"}}, "must be in [0, 1]");
    }
    if (!IsProbability(kv.delete_fraction())) {
      problems_.Add({{"workload", w}, {"kv"}, {"delete_fraction"}}, "must be in [0, 1]");
    }
    if (!IsProbability(kv.cas_fraction())) {
      problems_.Add({{"workload", w}, {"kv"}, {"cas_fraction"}}, "must be in [0, 1]");
    }
    if (kv.read_fraction() + kv.delete_fraction() + kv.cas_fraction() > 1 + 1e-9) {
      problems_.Add({{"workload", w}, {"kv"}, {"cas_fraction"}},
                    "reads, deletes and conditional writes together exceed every operation");
    }
    const auto serial = static_cast<charybdis::ConsistencyLevel>(kv.serial_consistency());
    if (serial != charybdis::CL_UNSET && !charybdis::IsSerial(serial)) {
      problems_.Add({{"workload", w}, {"kv"}, {"serial_consistency"}},
                    "must be CL_SERIAL or CL_LOCAL_SERIAL");
    }
    if (sweep && kv.key_count() == 0) {
      problems_.Add({{"workload", w}, {"kv"}, {"key_count"}}, "a key sweep or preload needs key_count");
    }
    if (kv.read_after_write() && kv.key_count() != 0) {
      problems_.Add({{"workload", w}, {"kv"}, {"read_after_write"}},
                    "reading after every write is for fresh keys (key_count: 0)");
    }
    CheckKvLevels(w, kv);
    if (!kv.datacenter().empty()) {
      CheckDatacenterName({{"workload", w}, {"kv"}, {"datacenter"}}, kv.datacenter());
    }
    if (kv.start_ms() >= spec_.time_limit_ms()) {
      problems_.Add({{"workload", w}, {"kv"}, {"start_ms"}}, "starts after the time limit");
    }
  }

  // Levels for the kinds of operation the workload makes, each valid for
  // its kind.
  void CheckKvLevels(int w, const scenario::KvWorkload& kv) {
    const bool sweep = kv.sweep_keys() || kv.preload_keys();
    const bool plain_writes =
        !kv.lwt_writes() && !kv.lock_step_cas() &&
        (kv.delete_fraction() > 0 ||
         kv.read_fraction() + kv.delete_fraction() + kv.cas_fraction() < 1 - 1e-9);
    const bool writes = kv.preload_keys() || (!sweep && plain_writes);
    const bool reads = kv.sweep_keys() || kv.lock_step_cas() ||
                       (!sweep && (kv.read_fraction() > 0 || kv.read_after_write()));
    if (writes && kv.write_consistency_size() == 0) {
      problems_.Add({{"workload", w}, {"kv"}, {"write_consistency"}}, "give at least one level for writes");
    }
    if (reads && kv.read_consistency_size() == 0) {
      problems_.Add({{"workload", w}, {"kv"}, {"read_consistency"}}, "give at least one level for reads");
    }
    for (int i = 0; i < kv.write_consistency_size(); i++) {
      const auto level = static_cast<charybdis::ConsistencyLevel>(kv.write_consistency(i));
      if (absl::Status valid = charybdis::ValidForWrite(level); !valid.ok()) {
        problems_.Add({{"workload", w}, {"kv"}, {"write_consistency", i}}, std::string(valid.message()));
      }
    }
    for (int i = 0; i < kv.read_consistency_size(); i++) {
      const auto level = static_cast<charybdis::ConsistencyLevel>(kv.read_consistency(i));
      if (absl::Status valid = charybdis::ValidForRead(level); !valid.ok()) {
        problems_.Add({{"workload", w}, {"kv"}, {"read_consistency", i}}, std::string(valid.message()));
      }
    }
  }

  void CheckSchema() {
    std::set<std::string> names;
    const auto& tables = spec_.schema().table();
    for (int t = 0; t < tables.size(); t++) {
      if (tables[t].name().empty()) {
        problems_.Add({{"schema"}, {"table", t}, {"name"}}, "a table needs a name");
      } else if (!names.insert(tables[t].name()).second) {
        problems_.Add({{"schema"}, {"table", t}, {"name"}},
                      absl::StrCat("table \"", tables[t].name(), "\" is declared twice"));
      }
      if (tables[t].column_size() == 0) {
        problems_.Add({{"schema"}, {"table", t}, {"column"}}, "a table needs at least one column");
      }
      if (!tables[t].tombstone_gc().empty()) {
        const absl::StatusOr<TombstoneGc::Mode> mode = ParseTombstoneGcMode(tables[t].tombstone_gc());
        if (!mode.ok()) problems_.Add({{"schema"}, {"table", t}, {"tombstone_gc"}}, std::string(mode.status().message()));
      }
    }
  }

  void CheckStorage() {
    const std::string problem = CommitlogSyncPeriodProblem(spec_.storage().commitlog_sync());
    if (!problem.empty()) problems_.Add({{"storage"}, {"commitlog_sync"}, {"period_ms"}}, problem);
  }

  // A lost message may be a well node's answer: availability is owed
  // only in a world that loses none.
  void CheckAvailability() {
    if (!spec_.checks().available_when_well().enabled()) return;
    bool lossy = spec_.network().loss() > 0 || spec_.random_faults().max_loss() > 0;
    for (const auto& action : spec_.faults().action()) lossy = lossy || action.messages().loss() > 0;
    if (lossy) {
      problems_.Add({{"checks"}, {"available_when_well"}},
                    "needs a world without message loss (network.loss, random_faults.max_loss and message faults 0)");
    }
  }

  void CheckCoordinator() {
    const auto& coordinator = spec_.coordinator();
    const double percentile = coordinator.speculative_retry_percentile();
    if (percentile < 0 || percentile > 100) {
      problems_.Add({{"coordinator"}, {"speculative_retry_percentile"}}, "must be in (0, 100]");
    }
  }

  void CheckDataChecks() {
    bool kv = false;
    for (const auto& workload : spec_.workload()) kv = kv || workload.has_kv();
    for (const HistoryCheckField& check : kHistoryChecks) {
      if (check.needs_kv && (spec_.checks().*check.wanted)() && !kv) {
        problems_.Add({{"checks"}, {check.name}}, "needs a kv workload to check");
      }
    }
    if (spec_.checks().replicas_converge() && spec_.schema().table_size() == 0) {
      problems_.Add({{"checks"}, {"replicas_converge"}}, "needs a schema with tables");
    }
    if (spec_.checks().acknowledged_writes_kept() && !kv) {
      problems_.Add({{"checks"}, {"acknowledged_writes_kept"}}, "needs a kv workload to check");
    }
    std::set<std::string> metrics;
    for (const auto& [name, value] : ShardMetrics().Counters()) metrics.insert(name);
    const auto& checks = spec_.checks();
    for (int i = 0; i < checks.metric_size(); i++) {
      const auto& metric = checks.metric(i);
      if (!metrics.count(metric.metric())) {
        problems_.Add({{"checks"}, {"metric", i}, {"metric"}},
                      absl::StrCat("no metric is named \"", metric.metric(), "\""));
      }
      if (metric.relation_case() == scenario::MetricCheck::RELATION_NOT_SET) {
        problems_.Add({{"checks"}, {"metric", i}},
                      "give a relation (at_least, at_most, equals, shard_spread or "
                      "equals_finished_paxos_operations)");
      }
      if (metric.relation_case() == scenario::MetricCheck::kEquals && !metrics.count(metric.equals())) {
        problems_.Add({{"checks"}, {"metric", i}, {"equals"}},
                      absl::StrCat("no metric is named \"", metric.equals(), "\""));
      }
    }
    for (int i = 0; i < checks.workload_latency_size(); i++) {
      for (const std::string& name :
           {checks.workload_latency(i).workload(), checks.workload_latency(i).baseline()}) {
        bool found = false;
        for (const auto& workload : spec_.workload()) found = found || workload.name() == name;
        if (!found) {
          problems_.Add({{"checks"}, {"workload_latency", i}},
                        absl::StrCat("no workload is named \"", name, "\""));
        }
      }
    }
    for (int i = 0; i < checks.latency_size(); i++) {
      const auto& latency = checks.latency(i);
      if (!kv) problems_.Add({{"checks"}, {"latency", i}}, "needs a kv workload to measure");
      if (latency.faster() == charybdis::CL_UNSET || latency.slower() == charybdis::CL_UNSET) {
        problems_.Add({{"checks"}, {"latency", i}}, "name both levels (faster and slower)");
      }
      if (latency.at_most() < 0 || latency.at_least() < 0) {
        problems_.Add({{"checks"}, {"latency", i}}, "bounds may not be negative");
      }
    }
    for (int i = 0; i < checks.sweep_reaches_probe_size(); i++) {
      if (!IsProbe(checks.sweep_reaches_probe(i))) {
        problems_.Add({{"checks"}, {"sweep_reaches_probe", i}},
                      absl::StrCat("no probe \"", checks.sweep_reaches_probe(i),
                                   "\" (core/env/probe.h lists them)"));
      }
    }
    if (checks.hints_cover_missed_writes_of_node() != 0) {
      CheckNode({{"checks"}, {"hints_cover_missed_writes_of_node"}},
                checks.hints_cover_missed_writes_of_node());
    }
  }

  void CheckNode(std::initializer_list<FieldStep> steps, uint32_t node) {
    if (node == 0 || node > topology_.nodes.size()) {
      problems_.Add(steps, absl::StrCat("no node ", node, ": nodes are numbered 1 to ",
                                        topology_.nodes.size()));
    }
  }

  void CheckProbability(std::initializer_list<FieldStep> steps, double value) {
    if (!IsProbability(value)) problems_.Add(steps, "must be in [0, 1]");
  }

  void CheckDuration(std::initializer_list<FieldStep> steps, uint64_t duration_ms) {
    if (duration_ms == 0) problems_.Add(steps, "must be at least 1");
  }

  bool UsesPaxos() const {
    for (const auto& workload : spec_.workload()) {
      if (!workload.has_kv()) continue;
      const auto& kv = workload.kv();
      bool serial_reads = false;
      for (int level : kv.read_consistency()) {
        serial_reads = serial_reads || IsSerial(static_cast<ConsistencyLevel>(level));
      }
      if (kv.cas_fraction() > 0 || kv.lwt_writes() || kv.lock_step_cas() || serial_reads) return true;
    }
    return false;
  }

  void CheckFaults() {
    const auto& actions = spec_.faults().action();
    for (int a = 0; a < actions.size(); a++) {
      const auto& action = actions[a];
      if (action.at_ms() >= spec_.time_limit_ms()) {
        problems_.Add({{"faults"}, {"action", a}, {"at_ms"}}, "is after the time limit");
      }
      if (action.at_us() >= 1000) {
        problems_.Add({{"faults"}, {"action", a}, {"at_us"}}, "below 1000 (more is at_ms)");
      }
      if (action.kind_case() != scenario::FaultAction::KIND_NOT_SET) {
        const FaultKind& kind = FaultKindOf(action.kind_case());
        if (kind.duration_ms != nullptr) {
          CheckDuration({{"faults"}, {"action", a}, {kind.name}, {"duration_ms"}}, kind.duration_ms(action));
        }
      }
      switch (action.kind_case()) {
        case scenario::FaultAction::kCrash:
          CheckNode({{"faults"}, {"action", a}, {"crash"}, {"node"}}, action.crash().node());
          break;
        case scenario::FaultAction::kRestart:
          CheckNode({{"faults"}, {"action", a}, {"restart"}, {"node"}}, action.restart().node());
          break;
        case scenario::FaultAction::kPartition:
          CheckPartition(a, action.partition());
          break;
        case scenario::FaultAction::kHeal:
          break;
        case scenario::FaultAction::kClog:
          CheckNode({{"faults"}, {"action", a}, {"clog"}, {"node"}}, action.clog().node());
          break;
        case scenario::FaultAction::kClockSkew:
          CheckNode({{"faults"}, {"action", a}, {"clock_skew"}, {"node"}}, action.clock_skew().node());
          if (std::abs(action.clock_skew().drift_ppm()) > 100'000) {
            problems_.Add({{"faults"}, {"action", a}, {"clock_skew"}, {"drift_ppm"}},
                          "at most 100000 (10%) either way");
          }
          break;
        case scenario::FaultAction::kDisk:
          CheckDiskFault(a, action.disk());
          break;
        case scenario::FaultAction::kPause:
          CheckNode({{"faults"}, {"action", a}, {"pause"}, {"node"}}, action.pause().node());
          break;
        case scenario::FaultAction::kCrashPoint:
          CheckCrashPoint(a, action.crash_point());
          break;
        case scenario::FaultAction::kMessages:
          CheckProbability({{"faults"}, {"action", a}, {"messages"}, {"loss"}}, action.messages().loss());
          CheckProbability({{"faults"}, {"action", a}, {"messages"}, {"duplicate"}},
                           action.messages().duplicate());
          CheckProbability({{"faults"}, {"action", a}, {"messages"}, {"reorder"}},
                           action.messages().reorder());
          break;
        case scenario::FaultAction::KIND_NOT_SET:
          problems_.Add({{"faults"}, {"action", a}}, "say what happens (crash, restart, partition, ...)");
          break;
      }
    }
  }

  void CheckDiskFault(int a, const scenario::DiskFault& disk) {
    CheckNode({{"faults"}, {"action", a}, {"disk"}, {"node"}}, disk.node());
    CheckProbability({{"faults"}, {"action", a}, {"disk"}, {"corrupt_read_probability"}},
                     disk.corrupt_read_probability());
    CheckProbability({{"faults"}, {"action", a}, {"disk"}, {"misdirect_write_probability"}},
                     disk.misdirect_write_probability());
    if (disk.misdirect_write_probability() > 0 && UsesPaxos()) {
      // A misdirected write leaves the old, well-formed state under its
      // own key: an acceptor forgets what it acknowledged.
      problems_.Add({{"faults"}, {"action", a}, {"disk"}, {"misdirect_write_probability"}},
                    "Paxos does not survive an acceptor that forgets its promises: no "
                    "misdirected writes with LWTs or serial reads (docs/decisions.md)");
    }
  }

  void CheckCrashPoint(int a, const scenario::CrashPointFault& point) {
    CheckNode({{"faults"}, {"action", a}, {"crash_point"}, {"node"}}, point.node());
    if (point.point() == scenario::CrashPointFault::POINT_UNSET) {
      problems_.Add({{"faults"}, {"action", a}, {"crash_point"}, {"point"}},
                    "say when: AFTER_REPLY, BEFORE_SYNC or AFTER_SYNC");
    }
    if (point.message().empty()) return;
    if (point.point() != scenario::CrashPointFault::AFTER_REPLY) {
      problems_.Add({{"faults"}, {"action", a}, {"crash_point"}, {"message"}},
                    "only AFTER_REPLY waits for a kind of message");
    } else if (!IsReply(EnvelopeBodyNamed(point.message()))) {
      problems_.Add({{"faults"}, {"action", a}, {"crash_point"}, {"message"}},
                    absl::StrCat("\"", point.message(),
                                 "\" is not a reply (replica_write_ack, replica_read_response, "
                                 "paxos_promise, paxos_accept_reply, paxos_commit_ack, "
                                 "client_response, pong)"));
    }
  }

  void CheckPartition(int a, const scenario::PartitionFault& partition) {
    std::set<uint32_t> side_a;
    for (int i = 0; i < partition.side_a_size(); i++) {
      CheckNode({{"faults"}, {"action", a}, {"partition"}, {"side_a", i}}, partition.side_a(i));
      side_a.insert(partition.side_a(i));
    }
    if (side_a.empty()) {
      problems_.Add({{"faults"}, {"action", a}, {"partition"}, {"side_a"}}, "name at least one node");
    }
    for (int i = 0; i < partition.side_b_size(); i++) {
      CheckNode({{"faults"}, {"action", a}, {"partition"}, {"side_b", i}}, partition.side_b(i));
      if (side_a.count(partition.side_b(i))) {
        problems_.Add({{"faults"}, {"action", a}, {"partition"}, {"side_b", i}},
                      absl::StrCat("node ", partition.side_b(i), " is on both sides"));
      }
    }
    if (partition.side_b_size() == 0 && side_a.size() >= topology_.nodes.size()) {
      problems_.Add({{"faults"}, {"action", a}, {"partition"}, {"side_a"}},
                    "leaves no node on the other side");
    }
  }

  void CheckRandomFaults() {
    const auto& faults = spec_.random_faults();
    if (!spec_.has_random_faults()) return;
    if (faults.end_ms() <= faults.start_ms()) {
      problems_.Add({{"random_faults"}, {"end_ms"}}, "must be after start_ms");
    }
    if (faults.end_ms() > spec_.time_limit_ms()) {
      problems_.Add({{"random_faults"}, {"end_ms"}}, "is after the time limit");
    }
    const std::pair<const char*, double> probabilities[] = {
        {"max_loss", faults.max_loss()},
        {"max_power_cut_fraction", faults.max_power_cut_fraction()},
        {"max_duplicate", faults.max_duplicate()},
        {"max_reorder", faults.max_reorder()}};
    for (const auto& [field, value] : probabilities) {
      if (!IsProbability(value)) problems_.Add({{"random_faults"}, {field}}, "must be in [0, 1]");
    }
    for (const FaultKind& kind : FaultKinds()) {
      if (kind.random_rate == nullptr) continue;
      const double rate = kind.random_rate(faults);
      if (rate < 0 || rate > 10'000) {
        problems_.Add({{"random_faults"}, {kind.random_rate_field}}, "must be between 0 and 10000");
      }
    }
    if (faults.max_nodes_down() >= topology_.nodes.size() && topology_.nodes.size() > 1) {
      problems_.Add({{"random_faults"}, {"max_nodes_down"}},
                    absl::StrCat("must leave at least one of the ", topology_.nodes.size(),
                                 " nodes up"));
    }
  }

  void CheckSettle() {
    uint64_t last_fault_ms = spec_.has_random_faults() ? spec_.random_faults().end_ms() : 0;
    for (const auto& action : spec_.faults().action()) {
      last_fault_ms = std::max(last_fault_ms, action.at_ms() + action.clog().duration_ms() +
                                                  action.pause().duration_ms() +
                                                  action.disk().duration_ms());
    }
    if (last_fault_ms + spec_.checks().settle_ms() > spec_.time_limit_ms()) {
      problems_.Add({{"checks"}, {"settle_ms"}},
                    absl::StrCat("faults last until ", last_fault_ms, " ms; with ",
                                 spec_.checks().settle_ms(), " ms to settle that passes the ",
                                 spec_.time_limit_ms(), " ms time limit"));
    }
  }

  const scenario::Scenario& spec_;
  TextProtoProblems problems_;
  Topology topology_;
};

}  // namespace

std::string ValidateScenario(const std::string& path, const scenario::Scenario& spec,
                             const TextFormat::ParseInfoTree& locations) {
  return Validator(path, spec, locations).Run();
}

}  // namespace charybdis::sim
