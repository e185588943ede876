// Integration tests of real nodes: a 3-node cluster (2 shards each) of
// charybdis-node processes on loopback, each test with its own free ports
// and directory, stopped and deleted at the end.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <rocksdb/db.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "core/cluster/token_ring.h"
#include "core/data/storage_codec.h"
#include "core/data/token.h"
#include "core/topology/topology_log.h"
#include "node/ctl/status_table.h"
#include "node/ctl/topology_operation.h"
#include "node/local/local_cluster.h"
#include "tests/requests.h"

namespace charybdis::node {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kShards = 2;

// The node binary is a data dependency, in the runfiles.
const char kNodeBinary[] = "node/charybdis-node";

std::string FreshDirectory(const std::string& name) {
  const char* temp = std::getenv("TEST_TMPDIR");
  const fs::path path = fs::path(temp != nullptr ? temp : "/tmp") / ("cluster-" + name);
  fs::remove_all(path);
  return path.string();
}

class NodeClusterTest : public ::testing::Test {
 protected:
  void StartCluster(const std::string& extra_config = "", uint32_t nodes = 3) {
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    directory_ = FreshDirectory(name);
    LocalCluster::Options options;
    options.nodes = nodes;
    options.shards = kShards;
    options.extra_config = extra_config;
    auto cluster = LocalCluster::Create(directory_, kNodeBinary, options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::make_unique<LocalCluster>(std::move(*cluster));
    const absl::Status started = cluster_->StartAll();
    ASSERT_TRUE(started.ok()) << started;
  }

  void TearDown() override {
    if (cluster_ != nullptr) {
      (void)cluster_->StopAll();
      if (HasFailure()) KeepLogs();
      cluster_.reset();
    }
    if (!directory_.empty()) fs::remove_all(directory_);
  }

  // A failure that happens once in many runs is read from the nodes' logs:
  // Bazel keeps TEST_UNDECLARED_OUTPUTS_DIR (bazel-testlogs/.../outputs).
  void KeepLogs() {
    const char* outputs = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
    if (outputs == nullptr) return;
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (NodeId node : cluster_->nodes()) {
      std::error_code ignored;
      fs::copy_file(cluster_->log_path(node), fs::path(outputs) / absl::StrCat(name, "-node", node, ".log"),
                    fs::copy_options::overwrite_existing, ignored);
    }
  }

  ClientResponse Execute(NodeId node, ClientRequest request) {
    ClientResponse response;
    const grpc::Status status = TryExecute(node, std::move(request), response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  // The same, asked again while the answer is UNAVAILABLE (up to 60 s): a
  // node catching up with its peers' topology log says "try again", as
  // one that just started and does not take requests yet does.
  ClientResponse ExecuteUntilAvailable(NodeId node, const ClientRequest& request) {
    ClientResponse response = Execute(node, request);
    for (int i = 0; i < 120 && response.code() == ClientResponse::UNAVAILABLE; i++) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      response = Execute(node, request);
    }
    return response;
  }

  // The same, where the node may be gone.
  grpc::Status TryExecute(NodeId node, ClientRequest request, ClientResponse& response) {
    ExecuteRequest execute;
    *execute.mutable_request() = std::move(request);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    return cluster_->Connect(node)->Execute(&context, execute, &response);
  }

  static ClientRequest Put(const std::string& key, const std::string& value, ConsistencyLevel level) {
    return testing::PutRequest("kv", "v", key, value, level);
  }
  static ClientRequest Get(const std::string& key, ConsistencyLevel level) {
    return testing::GetRequest("kv", key, level);
  }
  static ClientRequest IfNotExists(const std::string& key, const std::string& value) {
    return testing::IfNotExistsRequest("kv", "v", key, value);
  }
  static std::string ValueOf(const ClientResponse& response) { return testing::FirstValue(response); }

  // A node's metric summed over its shards.
  uint64_t Metric(NodeId node, const std::string& name) {
    const absl::StatusOr<uint64_t> total = cluster_->MetricTotal(node, name);
    EXPECT_TRUE(total.ok()) << total.status();
    return total.value_or(0);
  }

  // `viewer`'s status once it holds `node` in `state` (the driver of an
  // operation sees it first, the others within a heartbeat or so), or
  // after 10 s.
  StatusResponse StatusOnceItSees(NodeId viewer, NodeId node, const std::string& state) {
    StatusResponse status;
    for (int i = 0; i < 100; i++) {
      grpc::ClientContext context;
      status.Clear();
      EXPECT_TRUE(cluster_->Connect(viewer)->Status(&context, StatusRequest(), &status).ok());
      auto seen = status.member_state().find(node);
      if (seen != status.member_state().end() && seen->second == state) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return status;
  }

  bool SeesUp(NodeId viewer, NodeId node) {
    grpc::ClientContext context;
    StatusResponse status;
    EXPECT_TRUE(cluster_->Connect(viewer)->Status(&context, StatusRequest(), &status).ok());
    return std::find(status.up().begin(), status.up().end(), node) != status.up().end();
  }

  // Writes k0..k{count-1} at QUORUM, kills every node with its power cut,
  // restarts them, and returns how many of the acknowledged writes a read
  // at ALL still finds; `dropped` is what the power cuts took from disks.
  int AcknowledgedWritesAfterAPowerCutOfEveryNode(int count, uint64_t& dropped) {
    for (int i = 0; i < count; i++) {
      const ClientResponse written = Execute(1 + i % 3, Put(absl::StrCat("k", i), "v", CL_QUORUM));
      EXPECT_EQ(written.code(), ClientResponse::OK) << written.message();
    }
    for (NodeId node : cluster_->nodes()) {
      const absl::StatusOr<DroppedData> killed = cluster_->Kill(node, /*power_cut=*/true);
      EXPECT_TRUE(killed.ok()) << killed.status();
      if (killed.ok()) dropped += killed->bytes_dropped;
    }
    const absl::Status restarted = cluster_->StartAll();
    EXPECT_TRUE(restarted.ok()) << restarted;
    std::vector<std::string> keys;
    for (int i = 0; i < count; i++) keys.push_back(absl::StrCat("k", i));
    return FoundAtAll(keys);
  }

  // How many of `keys` a read at ALL finds, the reads spread over the nodes.
  int FoundAtAll(const std::vector<std::string>& keys) {
    int found = 0;
    for (size_t i = 0; i < keys.size(); i++) {
      const ClientResponse read = Execute(1 + i % 3, Get(keys[i], CL_ALL));
      EXPECT_EQ(read.code(), ClientResponse::OK) << read.message();
      found += read.rows_size() > 0;
    }
    return found;
  }

  std::string directory_;
  std::unique_ptr<LocalCluster> cluster_;
};

TEST_F(NodeClusterTest, QuorumWritesAreSeenByQuorumReadsOnEveryNode) {
  StartCluster();
  for (int i = 0; i < 100; i++) {
    const ClientResponse written = Execute(1 + i % 3, Put(absl::StrCat("k", i), absl::StrCat("v", i), CL_QUORUM));
    ASSERT_EQ(written.code(), ClientResponse::OK) << written.message();
  }
  for (int i = 0; i < 100; i++) {
    const ClientResponse read = Execute(1 + (i + 1) % 3, Get(absl::StrCat("k", i), CL_QUORUM));
    ASSERT_EQ(read.code(), ClientResponse::OK) << read.message();
    EXPECT_EQ(ValueOf(read), absl::StrCat("v", i));
  }
  EXPECT_EQ(Metric(1, "coordinator_writes") + Metric(2, "coordinator_writes") +
                Metric(3, "coordinator_writes"),
            100u);
  // ctl status: every member up and normal, each a replica of the whole
  // ring (RF 3 on 3 nodes), each storing something.
  std::vector<StatusAnswer> answers;
  for (NodeId node = 1; node <= 3; node++) {
    grpc::ClientContext context;
    StatusResponse status;
    ASSERT_TRUE(cluster_->Connect(node)->Status(&context, StatusRequest(), &status).ok());
    EXPECT_GT(status.load_bytes(), 0u) << node;
    EXPECT_EQ(status.topology_version(), 1u);
    answers.push_back({cluster_->client_address(node), status, ""});
  }
  const std::string table = StatusTable(answers);
  size_t whole_ring = 0;
  for (size_t at = table.find("100.0%"); at != std::string::npos; at = table.find("100.0%", at + 1)) whole_ring++;
  EXPECT_EQ(whole_ring, 3u) << table;
  for (const Member& member : answers[0].status->member()) {
    EXPECT_NE(table.find(absl::StrCat("UN  ", member.internode_address())), std::string::npos) << table;
  }
  // No client request writes the system's tables (the logs, the roles),
  // nor reads the roles' hashes (docs/security.md).
  for (const ClientRequest& request :
       {testing::PutRequest("system.schema_log", "statement", "k", "DROP KEYSPACE app", CL_QUORUM),
        testing::GetRequest("system_auth.roles", "admin", CL_QUORUM)}) {
    const ClientResponse refused = Execute(1, request);
    EXPECT_EQ(refused.code(), ClientResponse::INVALID_REQUEST) << request.ShortDebugString();
    EXPECT_NE(refused.message().find("is the system's"), std::string::npos) << refused.message();
  }
}

TEST_F(NodeClusterTest, IfNotExistsAppliesExactlyOnceAmongConcurrentClients) {
  StartCluster();
  constexpr int kClients = 8;
  std::vector<ClientResponse> answers(kClients);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; i++) {
    clients.emplace_back([this, i, &answers] {
      answers[i] = Execute(1 + i % 3, IfNotExists("contended", absl::StrCat("client", i)));
    });
  }
  for (auto& client : clients) client.join();
  // The value that won, as every node's serial read sees it.
  const std::string winner = ValueOf(Execute(1, Get("contended", CL_SERIAL)));
  ASSERT_FALSE(winner.empty());
  for (NodeId node = 2; node <= 3; node++) EXPECT_EQ(ValueOf(Execute(node, Get("contended", CL_SERIAL))), winner);
  int applied = 0;
  std::set<std::string> unknown;  // values of the clients that timed out
  for (int i = 0; i < kClients; i++) {
    // On a loaded machine contention may outlast the CAS timeout: a
    // WRITE_TIMEOUT's outcome is unknown, and only definite answers are held
    // to the winner (issue 35: this test failed once, for no bug).
    if (answers[i].code() == ClientResponse::WRITE_TIMEOUT) {
      unknown.insert(absl::StrCat("client", i));
      continue;
    }
    ASSERT_EQ(answers[i].code(), ClientResponse::OK) << answers[i].message();
    if (answers[i].applied()) {
      applied++;
      EXPECT_EQ(absl::StrCat("client", i), winner);
    } else {
      EXPECT_EQ(ValueOf(answers[i]), winner);
    }
  }
  // One applied; or, if none said so, one whose answer was lost.
  if (unknown.empty()) EXPECT_EQ(applied, 1);
  EXPECT_LE(applied, 1);
  if (applied == 0) EXPECT_EQ(unknown.count(winner), 1u) << winner;
}

TEST_F(NodeClusterTest, ConcurrentPutsShareFsyncsOnEveryNode) {
  StartCluster();
  constexpr int kClients = 16;
  constexpr int kPutsEach = 20;
  // What the nodes synced before (their start's own writes) is not the load's.
  std::map<NodeId, std::pair<uint64_t, uint64_t>> before;
  for (NodeId node : cluster_->nodes()) {
    before[node] = {Metric(node, "storage_synced_writes"), Metric(node, "storage_syncs")};
  }
  std::atomic<int> failed{0};
  std::vector<std::thread> clients;
  for (int client = 0; client < kClients; client++) {
    clients.emplace_back([this, client, &failed] {
      for (int i = 0; i < kPutsEach; i++) {
        const ClientResponse written = Execute(1, Put(absl::StrCat("c", client, "-", i), "v", CL_QUORUM));
        if (written.code() != ClientResponse::OK) failed++;
      }
    });
  }
  for (auto& client : clients) client.join();
  EXPECT_EQ(failed.load(), 0);
  uint64_t synced_writes = 0;
  for (NodeId node : cluster_->nodes()) {
    // Counted by each shard's log writer (node/server/log_writer.h).
    const uint64_t writes = Metric(node, "storage_synced_writes") - before[node].first;
    const uint64_t syncs = Metric(node, "storage_syncs") - before[node].second;
    EXPECT_GT(syncs, 0u) << "node " << node;
    EXPECT_LT(syncs, writes) << "node " << node << ": every synced write had an fsync of its own";
    synced_writes += writes;
  }
  // Every acknowledged put is durable on at least a quorum of replicas.
  EXPECT_GE(synced_writes, uint64_t{2 * kClients * kPutsEach});
}

// What node `id`'s RocksDB directories hold for `key` of `table`, per shard
// (the node must be stopped).
std::map<ShardId, std::string> StoredValues(const LocalCluster& cluster, NodeId id, const std::string& key,
                                            const std::string& table = "kv") {
  std::map<ShardId, std::string> values;
  for (ShardId shard = 0; shard < kShards; shard++) {
    const std::string path = absl::StrCat(cluster.data_directory(id), "/shard-", shard);
    rocksdb::DB* raw = nullptr;
    const rocksdb::Status opened = rocksdb::DB::OpenForReadOnly(rocksdb::Options(), path, &raw);
    EXPECT_TRUE(opened.ok()) << path << ": " << opened.ToString();
    if (!opened.ok()) continue;
    std::unique_ptr<rocksdb::DB> db(raw);
    const std::string prefix = storage_codec::PartitionPrefix(table, key);
    std::vector<KeyValue> stored;
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      stored.push_back(KeyValue{it->key().ToString(), it->value().ToString()});
    }
    const storage_codec::Decoded decoded = storage_codec::DecodeScan(stored);
    EXPECT_TRUE(decoded.corrupt_keys.empty());
    if (!decoded.corrupt_keys.empty() || decoded.partition.rows.empty()) continue;
    const auto& cells = decoded.partition.rows.begin()->second.cells;
    if (cells.count("v")) values[shard] = cells.at("v").value;
  }
  return values;
}

TEST_F(NodeClusterTest, AKilledNodeGetsItsHintsAndEveryReplicaHoldsEveryAcknowledgedWrite) {
  StartCluster("hint_replay_interval_ms: 200");
  std::map<std::string, std::string> acknowledged;
  auto write = [&](int from, int to) {
    for (int i = from; i < to; i++) {
      const std::string key = absl::StrCat("k", i);
      const ClientResponse written = Execute(1 + i % 2, Put(key, absl::StrCat("v", i), CL_QUORUM));
      if (written.code() == ClientResponse::OK) acknowledged[key] = absl::StrCat("v", i);
    }
  };
  write(0, 50);
  ASSERT_TRUE(cluster_->Kill(3).ok());
  const auto killed_at = std::chrono::steady_clock::now();
  // Until nodes 1 and 2 have convicted node 3 (writes then hint at once).
  for (int i = 0; i < 100 && (SeesUp(1, 3) || SeesUp(2, 3)); i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_FALSE(SeesUp(1, 3) || SeesUp(2, 3));
  write(50, 150);
  const auto hinted = [this] { return Metric(1, "hints_written") + Metric(2, "hints_written"); };
  const auto sent = [this] { return Metric(1, "hints_sent") + Metric(2, "hints_sent"); };
  EXPECT_GE(hinted(), 100u);  // every write made while node 3 was down
  ASSERT_TRUE(cluster_->Start(3).ok());
  ASSERT_TRUE(cluster_->WaitForViews(20000).ok());
  // Replay, rate-limited, within a few seconds when the machine is idle;
  // up to a minute under load. A write in flight to node 3 when it died is
  // hinted only at its timeout (2 s): the count of hints is read again
  // until that has passed, and every hint written is acknowledged.
  const auto late_hints_written = killed_at + std::chrono::seconds(3);
  for (int i = 0; i < 600; i++) {
    if (std::chrono::steady_clock::now() > late_hints_written && sent() >= hinted()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_GE(sent(), hinted());
  ASSERT_EQ(acknowledged.size(), 150u);
  // A graceful stop (SIGTERM), logged as such, closes RocksDB.
  ASSERT_TRUE(cluster_->StopAll().ok());
  for (NodeId node = 1; node <= 3; node++) {
    std::stringstream log;
    log << std::ifstream(cluster_->log_path(node)).rdbuf();
    EXPECT_NE(log.str().find("\"event\":\"stopped\""), std::string::npos) << "node " << node;
  }
  for (NodeId node = 1; node <= 3; node++) {
    for (const auto& [key, value] : acknowledged) {
      const auto stored = StoredValues(*cluster_, node, key);
      // In exactly the shard that owns the key, and nowhere else.
      const ShardId owner = ShardOf(TokenOf(key), kShards);
      ASSERT_EQ(stored.size(), 1u) << "node " << node << " key " << key;
      EXPECT_EQ(stored.begin()->first, owner) << "node " << node << " key " << key;
      EXPECT_EQ(stored.begin()->second, value) << "node " << node << " key " << key;
    }
  }
}

// ctl decommission's path on real processes: node 4 of four streams its
// ranges away and leaves while the other three stay; then each of them,
// read from its own disks, holds every key written before (RF 3 of three
// nodes), the ranges it gained included, which only streaming brought.
TEST_F(NodeClusterTest, ADecommissionedNodesRangesStreamToTheNodesThatStay) {
  StartCluster("", 4);
  std::map<std::string, std::string> written;
  for (int i = 0; i < 60; i++) {
    const std::string key = absl::StrCat("k", i);
    ASSERT_EQ(Execute(1 + i % 4, Put(key, absl::StrCat("v", i), CL_ALL)).code(), ClientResponse::OK);
    written[key] = absl::StrCat("v", i);
  }
  OperationRequest request;
  request.operation = topology::Operation::kDecommission;
  request.node = 4;
  request.driver = 4;
  request.driver_address = cluster_->client_address(4);
  request.timeout = std::chrono::seconds(120);
  std::vector<std::string> progress;
  const absl::Status done = RunOperation(request, [&](const std::string& line) { progress.push_back(line); });
  ASSERT_TRUE(done.ok()) << done;
  ASSERT_FALSE(progress.empty());
  EXPECT_NE(progress.back().find("node 4 is left"), std::string::npos) << progress.back();
  // A second decommission of the node that left is refused, and says why.
  const absl::Status again = RunOperation(request, [](const std::string&) {});
  EXPECT_NE(again.message().find("not a normal member"), std::string::npos) << again;
  ASSERT_TRUE(cluster_->StopAll().ok());
  for (NodeId node = 1; node <= 3; node++) {
    for (const auto& [key, value] : written) {
      const auto stored = StoredValues(*cluster_, node, key);
      ASSERT_EQ(stored.size(), 1u) << "node " << node << " lacks " << key;
      EXPECT_EQ(stored.begin()->second, value) << "node " << node << " key " << key;
    }
  }
}

// ALTER KEYSPACE on real processes: a keyspace of one replica of three
// nodes holds 60 keys, each on one node's disks; raised to three, the
// statement is answered once the data moved, and every node holds every
// key on its own disks. Lowered to one again and cleaned up, each key is
// on one node's disks.
TEST_F(NodeClusterTest, AnAlterOfAKeyspaceChangesItsReplicationOnceItsDataMoved) {
  StartCluster();
  const auto schema_change = [this](const std::string& statement) {
    ClientRequest request;
    request.mutable_schema_change()->set_statement(statement);
    return Execute(1, request);
  };
  for (const char* statement : {"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
                                "CREATE TABLE ks.t (k text PRIMARY KEY, v text)"}) {
    const ClientResponse done = schema_change(statement);
    ASSERT_EQ(done.code(), ClientResponse::OK) << statement << ": " << done.message();
  }
  const std::string table = "ks.t@2";  // created by the schema log's entry 2
  std::map<std::string, std::string> written;
  for (int i = 0; i < 60; i++) {
    const std::string key = absl::StrCat("k", i);
    const ClientResponse put = Execute(1, testing::PutRequest(table, "v", key, absl::StrCat("v", i), CL_ONE));
    ASSERT_EQ(put.code(), ClientResponse::OK) << put.message();
    written[key] = absl::StrCat("v", i);
  }
  const ClientResponse raised =
      schema_change("ALTER KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}");
  ASSERT_EQ(raised.code(), ClientResponse::OK) << raised.message();
  EXPECT_EQ(raised.schema_sequence(), 3u) << "the ALTER is the schema log's entry 3";
  ASSERT_TRUE(cluster_->StopAll().ok());
  for (NodeId node = 1; node <= 3; node++) {
    for (const auto& [key, value] : written) {
      const auto stored = StoredValues(*cluster_, node, key, table);
      ASSERT_EQ(stored.size(), 1u) << "node " << node << " lacks " << key;
      EXPECT_EQ(stored.begin()->second, value) << "node " << node << " key " << key;
    }
  }
  // Lowered to one again, and cleaned up: each key is on one node's disks.
  ASSERT_TRUE(cluster_->StartAll().ok());
  ASSERT_TRUE(cluster_->WaitForViews(20000).ok());
  const ClientResponse lowered =
      schema_change("ALTER KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
  ASSERT_EQ(lowered.code(), ClientResponse::OK) << lowered.message();
  for (NodeId node = 1; node <= 3; node++) {
    ClientRequest cleanup;
    cleanup.mutable_cleanup();
    const ClientResponse cleaned = ExecuteUntilAvailable(node, cleanup);
    ASSERT_EQ(cleaned.code(), ClientResponse::OK) << "node " << node << ": " << cleaned.message();
  }
  ASSERT_TRUE(cluster_->StopAll().ok());
  for (const auto& [key, value] : written) {
    int copies = 0;
    for (NodeId node = 1; node <= 3; node++) {
      const auto stored = StoredValues(*cluster_, node, key, table);
      copies += static_cast<int>(stored.size());
      if (!stored.empty()) EXPECT_EQ(stored.begin()->second, value) << "node " << node << " key " << key;
    }
    EXPECT_EQ(copies, 1) << key;
  }
}

// ctl rollback's path: node 4 begins its decommission, driving it, and is
// SIGKILLed before its first barrier can pass (it waits out the write
// timeout). Rolled back through node 1, node 4 is a normal member again;
// a second roll-back is refused and says why.
TEST_F(NodeClusterTest, AnOperationWhoseDriverDiedIsRolledBack) {
  StartCluster("", 4);
  topology::Entry begin;
  begin.kind = topology::Entry::Kind::kBegin;
  begin.operation = topology::Operation::kDecommission;
  begin.node = 4;
  begin.driver = 4;
  ClientRequest request;
  for (const auto& [column, value] : topology::EntryColumns(begin)) {
    (*request.mutable_topology_change()->mutable_entry())[column] = value;
  }
  const ClientResponse begun = Execute(4, request);
  ASSERT_EQ(begun.code(), ClientResponse::OK) << begun.message();
  ASSERT_TRUE(cluster_->Kill(4, /*power=*/false).ok());
  // ctl decommission's watch: its driver is dead, so it watches through
  // the others, and ends when they show the roll-back.
  OperationRequest watched;
  watched.node = 4;
  watched.driver = 4;
  watched.driver_address = cluster_->client_address(4);
  for (NodeId other : {1u, 2u, 3u}) watched.other_addresses.push_back(cluster_->client_address(other));
  watched.timeout = std::chrono::seconds(60);
  std::vector<std::string> lines;
  absl::Status watch_ended;
  std::thread watch([&] {
    watch_ended = WatchOperation(watched, [&lines](const std::string& line) { lines.push_back(line); });
  });
  const absl::StatusOr<uint64_t> rolled_back = RollBack(4, cluster_->client_address(1));
  watch.join();
  EXPECT_EQ(watch_ended.code(), absl::StatusCode::kAborted) << watch_ended;
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.front().find("node 4, the driver, does not answer"), std::string::npos) << lines.front();
  ASSERT_TRUE(rolled_back.ok()) << rolled_back.status();
  EXPECT_EQ(*rolled_back, begun.topology_version() + 1);
  EXPECT_EQ(StatusOnceItSees(1, 4, "normal").member_state().at(4), "normal");
  const absl::StatusOr<uint64_t> again = RollBack(4, cluster_->client_address(1));
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("no operation on node 4 is in progress"), std::string::npos) << again.status();
}

// ctl cluster add's path on real processes: node 4 starts with only the
// three members' addresses, reads the logs from them, joins and streams
// what it gains; then every member sees it normal and up, it takes writes
// at ALL, and read from its own disks it holds every key written before
// that it now replicates, which only streaming brought.
TEST_F(NodeClusterTest, ANewNodeJoinsAndHoldsTheRangesItGained) {
  StartCluster();
  std::map<std::string, std::string> written;
  for (int i = 0; i < 60; i++) {
    const std::string key = absl::StrCat("k", i);
    ASSERT_EQ(Execute(1 + i % 3, Put(key, absl::StrCat("v", i), CL_ALL)).code(), ClientResponse::OK);
    written[key] = absl::StrCat("v", i);
  }
  const absl::StatusOr<NodeId> added = cluster_->AddNode("");
  ASSERT_TRUE(added.ok()) << added.status();
  ASSERT_EQ(*added, 4u);
  ASSERT_TRUE(cluster_->Start(4).ok());
  std::vector<std::string> progress;
  const absl::Status joined = WatchJoin(4, cluster_->client_address(4), std::chrono::seconds(120),
                                        [&](const std::string& line) { progress.push_back(line); });
  ASSERT_TRUE(joined.ok()) << joined;
  ASSERT_FALSE(progress.empty());
  EXPECT_NE(progress.back().find("node 4 is normal"), std::string::npos) << progress.back();
  ASSERT_TRUE(cluster_->WaitForViews(20000).ok());
  const StatusResponse status = StatusOnceItSees(1, 4, "normal");
  EXPECT_EQ(status.member_state().at(4), "normal");
  // Node 4's tokens and addresses come from the topology log, not node 1's config.
  std::map<NodeId, std::vector<Token>> tokens;
  for (const RingEntry& entry : status.ring()) tokens[entry.node()].push_back(entry.token());
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_EQ(status.member_size(), 4);
  EXPECT_EQ(Execute(4, Put("after", "joined", CL_ALL)).code(), ClientResponse::OK);
  // ctl cleanup's request: node 1 removes what node 4 took from it.
  ClientRequest cleanup;
  cleanup.mutable_cleanup();
  const ClientResponse cleaned = ExecuteUntilAvailable(1, cleanup);
  ASSERT_EQ(cleaned.code(), ClientResponse::OK) << cleaned.message();
  EXPECT_GT(cleaned.cleanup_pairs(), 0u);
  ClusterLayout layout;
  for (NodeId node = 1; node <= 4; node++) layout.nodes.push_back(NodeInfo{node, "dc1", absl::StrCat("r", node)});
  layout.replication.per_datacenter["dc1"] = 3;
  const TokenRing ring(layout, tokens);
  ASSERT_TRUE(cluster_->StopAll().ok());
  int gained = 0;
  for (const auto& [key, value] : written) {
    const std::vector<NodeId>& replicas = ring.ReplicasOf(TokenOf(key));
    // Node 1, cleaned up, holds a key on its disks if and only if it replicates it.
    const bool node_1_replicates = std::find(replicas.begin(), replicas.end(), NodeId{1}) != replicas.end();
    EXPECT_EQ(StoredValues(*cluster_, 1, key).size(), node_1_replicates ? 1u : 0u) << "node 1 key " << key;
    if (std::find(replicas.begin(), replicas.end(), NodeId{4}) == replicas.end()) continue;
    gained++;
    const auto stored = StoredValues(*cluster_, 4, key);
    ASSERT_EQ(stored.size(), 1u) << "node 4 lacks " << key;
    EXPECT_EQ(stored.begin()->second, value) << "node 4 key " << key;
  }
  EXPECT_GT(gained, 20) << "node 4 gained few of 60 keys";
}

// ctl replace's path on real processes: node 3 is SIGKILLed for good; a
// replacement is refused while it runs, then node 4 takes its place and
// tokens, and read from its own disks holds every key written before (RF 3
// of three nodes), all streamed from the two survivors.
TEST_F(NodeClusterTest, ANewNodeReplacesAKilledOneAndHoldsItsRanges) {
  StartCluster();
  std::map<std::string, std::string> written;
  for (int i = 0; i < 40; i++) {
    const std::string key = absl::StrCat("k", i);
    ASSERT_EQ(Execute(1 + i % 3, Put(key, absl::StrCat("v", i), CL_ALL)).code(), ClientResponse::OK);
    written[key] = absl::StrCat("v", i);
  }
  const absl::StatusOr<NodeId> refused = cluster_->AddNode("", 3);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << refused.status();
  ASSERT_TRUE(cluster_->Kill(3).ok());
  const absl::StatusOr<NodeId> added = cluster_->AddNode("", 3);
  ASSERT_TRUE(added.ok()) << added.status();
  ASSERT_TRUE(cluster_->Start(*added).ok());
  const absl::Status replaced = WatchJoin(*added, cluster_->client_address(*added), std::chrono::seconds(120),
                                          [](const std::string&) {});
  ASSERT_TRUE(replaced.ok()) << replaced;
  const StatusResponse status = StatusOnceItSees(1, 3, "left");
  EXPECT_EQ(status.member_state().at(3), "left");
  EXPECT_EQ(status.member_state().at(*added), "normal");
  ASSERT_TRUE(cluster_->StopAll().ok());
  for (const auto& [key, value] : written) {
    const auto stored = StoredValues(*cluster_, *added, key);
    ASSERT_EQ(stored.size(), 1u) << "node 4 lacks " << key;
    EXPECT_EQ(stored.begin()->second, value) << "node 4 key " << key;
  }
}

TEST_F(NodeClusterTest, AcknowledgedWritesSurviveAPowerCutOfEveryNodeInGroupMode) {
  StartCluster();
  uint64_t dropped = 0;
  // Every acknowledged write was fsync'd first (the PERIODIC test below
  // shows the same cut taking what was not).
  EXPECT_EQ(AcknowledgedWritesAfterAPowerCutOfEveryNode(60, dropped), 60);
}

TEST_F(NodeClusterTest, WritesAcknowledgedWhileThePowerGoesSurviveInGroupMode) {
  StartCluster();
  // Clients keep writing until every node loses its power at once: the
  // cut finds writes in every stage, queued, written, syncing, answered.
  // (An acknowledgement sent a moment before its fsync ends is caught by
  // log_writer_test, whose syncs are slow on purpose: here the window is
  // too short to hit reliably.)
  constexpr int kClients = 8;
  std::mutex mutex;
  std::vector<std::string> acknowledged;
  std::atomic<bool> stop{false};
  std::vector<std::thread> clients;
  for (int client = 0; client < kClients; client++) {
    clients.emplace_back([&, client] {
      for (int i = 0; !stop; i++) {
        const std::string key = absl::StrCat("live-", client, "-", i);
        ClientResponse written;
        const grpc::Status status = TryExecute(1 + (client + i) % 3, Put(key, "v", CL_QUORUM), written);
        if (!status.ok() || written.code() != ClientResponse::OK) continue;
        std::lock_guard<std::mutex> lock(mutex);
        acknowledged.push_back(key);
      }
    });
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::lock_guard<std::mutex> lock(mutex);
    if (acknowledged.size() >= 100) break;
  }
  // One power cut for all: every node stops at once, then each loses
  // what it had not synced.
  for (NodeId node : cluster_->nodes()) EXPECT_TRUE(cluster_->Pause(node).ok());
  for (NodeId node : cluster_->nodes()) {
    const absl::StatusOr<DroppedData> killed = cluster_->Kill(node, /*power_cut=*/true);
    EXPECT_TRUE(killed.ok()) << killed.status();
  }
  stop = true;
  for (auto& client : clients) client.join();
  ASSERT_GE(acknowledged.size(), 100u);
  const absl::Status restarted = cluster_->StartAll();
  ASSERT_TRUE(restarted.ok()) << restarted;
  EXPECT_EQ(FoundAtAll(acknowledged), static_cast<int>(acknowledged.size()));
}

TEST_F(NodeClusterTest, APowerCutOfEveryNodeLosesAcknowledgedWritesInPeriodicMode) {
  StartCluster("commitlog_sync { mode: PERIODIC period_ms: 600000 }");
  uint64_t dropped = 0;
  // Acknowledged before any fsync: a power cut of every replica loses them.
  EXPECT_LT(AcknowledgedWritesAfterAPowerCutOfEveryNode(60, dropped), 60);
  EXPECT_GT(dropped, 0u);
}

TEST_F(NodeClusterTest, EachShardHasItsOwnRocksDbDirectory) {
  StartCluster();
  for (NodeId node = 1; node <= 3; node++) {
    for (ShardId shard = 0; shard < kShards; shard++) {
      const fs::path directory = fs::path(cluster_->data_directory(node)) / absl::StrCat("shard-", shard);
      EXPECT_TRUE(fs::exists(directory / "CURRENT")) << directory;
      EXPECT_TRUE(fs::exists(directory / "LOCK")) << directory;
    }
  }
}

// A plain HTTP GET on loopback.
std::string HttpGet(const std::string& address, const std::string& path) {
  const size_t colon = address.rfind(':');
  sockaddr_in target{};
  target.sin_family = AF_INET;
  target.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
  inet_pton(AF_INET, address.substr(0, colon).c_str(), &target.sin_addr);
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (connect(fd, reinterpret_cast<sockaddr*>(&target), sizeof(target)) != 0) {
    close(fd);
    return "";
  }
  const std::string request = absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: ", address, "\r\n\r\n");
  (void)!write(fd, request.data(), request.size());
  std::string response;
  char buffer[4096];
  for (ssize_t got; (got = read(fd, buffer, sizeof(buffer))) > 0;) response.append(buffer, got);
  close(fd);
  return response;
}

TEST_F(NodeClusterTest, MetricsPageIsPrometheusTextWithOneSeriesPerShard) {
  StartCluster();
  ASSERT_EQ(Execute(1, IfNotExists("m", "1")).code(), ClientResponse::OK);
  const std::string response = HttpGet(cluster_->metrics_address(1), "/metrics");
  ASSERT_EQ(response.rfind("HTTP/1.1 200", 0), 0u) << response.substr(0, 200);
  const std::string body = response.substr(response.find("\r\n\r\n") + 4);
  // Prometheus text format 0.0.4: comments, and `name{labels} value`.
  const std::regex comment(R"(# (TYPE [a-z_:][a-z0-9_:]* (counter|summary|gauge)|HELP .*))");
  const std::regex sample(R"([a-z_:][a-z0-9_:]*\{([a-z_]+="[^"]*",?)+\} -?[0-9.e+]+)");
  std::map<std::string, std::set<std::string>> shards_of;
  std::istringstream lines(body);
  std::string line;
  int samples = 0;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    if (line[0] == '#') {
      EXPECT_TRUE(std::regex_match(line, comment)) << line;
      continue;
    }
    ASSERT_TRUE(std::regex_match(line, sample)) << line;
    samples++;
    const std::string name = line.substr(0, line.find('{'));
    const size_t shard = line.find("shard=\"");
    ASSERT_NE(shard, std::string::npos) << line;
    shards_of[name].insert(line.substr(shard + 7, line.find('"', shard + 7) - shard - 7));
  }
  EXPECT_GT(samples, 50);
  for (const char* name : {"cas_total_operations", "cas_prune", "coordinator_writes", "hints_written"}) {
    EXPECT_EQ(shards_of[name], (std::set<std::string>{"0", "1"})) << name;
  }
  EXPECT_EQ(Metric(1, "cas_total_operations"), 1u);
}

// Runs the node binary on a config text; returns (exit status, stderr).
std::pair<int, std::string> RunNode(const std::string& directory, const std::string& config) {
  fs::create_directories(directory);
  const std::string config_path = directory + "/node.textproto";
  const std::string errors_path = directory + "/stderr";
  std::ofstream(config_path) << config;
  const pid_t pid = fork();
  if (pid == 0) {
    (void)!freopen(errors_path.c_str(), "w", stderr);
    const std::string flag = "--config=" + config_path;
    execl(kNodeBinary, "charybdis-node", flag.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  std::stringstream errors;
  errors << std::ifstream(errors_path).rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, errors.str()};
}

std::string ValidConfig(const std::string& data, int port) {
  return absl::StrCat(
      "node_id: 1\nshards: 1\ndata_directory: \"", data, "\"\n",
      "member { id: 1 datacenter: \"dc1\" rack: \"r1\" internode_address: \"127.0.0.1:", port,
      "\" client_address: \"127.0.0.1:", port + 1, "\" }\n",
      "replication { datacenter: \"dc1\" replication_factor: 1 }\n",
      "table { name: \"kv\" column: \"v\" }\n");
}

TEST(NodeConfigTest, AMalformedConfigExitsTwoNamingTheField) {
  const std::string directory = FreshDirectory("malformed");
  std::string config = ValidConfig(directory + "/data", 1);
  config.replace(config.find("replication_factor: 1"), 21, "replication_factor: 4");
  const auto [status, errors] = RunNode(directory, config);
  EXPECT_EQ(status, 2);
  EXPECT_NE(errors.find("node.textproto:5:"), std::string::npos) << errors;
  EXPECT_NE(errors.find("replication[0].replication_factor"), std::string::npos) << errors;
  EXPECT_NE(errors.find("must be between 1 and its 1 nodes"), std::string::npos) << errors;
  const auto [syntax_status, syntax_errors] = RunNode(directory, "node_id: one\n");
  EXPECT_EQ(syntax_status, 2);
  EXPECT_NE(syntax_errors.find("node.textproto:1:"), std::string::npos) << syntax_errors;
  fs::remove_all(directory);
}

TEST(NodeConfigTest, APortInUseOrAnotherNodesDirectoryExitsTwo) {
  const std::string directory = FreshDirectory("environment");
  // Hold a port.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  const int port = ntohs(address.sin_port);
  auto [status, errors] = RunNode(directory, ValidConfig(directory + "/data", port));
  EXPECT_EQ(status, 2);
  EXPECT_NE(errors.find("internode_address: cannot listen"), std::string::npos) << errors;
  close(fd);
  // A data directory claimed by node 7.
  fs::create_directories(directory + "/data7");
  std::ofstream(directory + "/data7/NODE_ID") << "7\n";
  std::tie(status, errors) = RunNode(directory, ValidConfig(directory + "/data7", port));
  EXPECT_EQ(status, 2);
  EXPECT_NE(errors.find("belongs to node 7"), std::string::npos) << errors;
  fs::remove_all(directory);
}

}  // namespace
}  // namespace charybdis::node
