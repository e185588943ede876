// ctl repair (core/repair/): on a simulated cluster of four (RF 3, a rack
// each, hints off), a node that missed writes and deletes while it was
// down gets exactly the rows it lacks from a repair, a repair of replicas
// in agreement sends nothing, and a repair that loses a replica, or that
// asks for what cannot be, says so. And a batch log's replay older than a
// purge is dropped by its replicas.

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/data/storage_codec.h"
#include "core/paxos/ballot.h"
#include "core/repair/range_repair.h"
#include "core/repair/repair_plan.h"
#include "sim/scenario_checks.h"
#include "tests/four_node_test.h"
#include "tests/requests.h"

namespace charybdis::sim {
namespace {

using ::charybdis::testing::PutRequest;

class RepairTest : public FourNodeTest {
 protected:
  RepairTest() : RepairTest("") {}
  // `table_options`: more settings of table t (its tombstone GC); `extra`:
  // more of the scenario.
  explicit RepairTest(const std::string& table_options, const std::string& extra = "")
      : FourNodeTest(Scenario{absl::StrReplaceAll(FourNodes("coordinator { disable_hinted_handoff: true } " + extra),
                                                  {{"column: \"a\" }", "column: \"a\" " + table_options + " }"}})}) {}

  static ClientRequest RepairRequest(const RepairOp& op = RepairOp()) {
    ClientRequest request;
    *request.mutable_repair() = op;
    return request;
  }
  // Sent to shard 1 of `node`, which hands it to shard 0.
  ClientResponse Repair(NodeId node, const RepairOp& op = RepairOp()) {
    return Call(RepairRequest(op), "k1", node, 50 * kMillisecond);
  }
  ClientResponse Delete(const std::string& key, ConsistencyLevel level) {
    ClientRequest request;
    request.mutable_write()->set_table("t");
    request.mutable_write()->set_partition_key(key);
    request.mutable_write()->set_delete_row(true);
    request.mutable_write()->set_consistency(level);
    return Call(request, key, 1);
  }

  bool Replicates(NodeId node, const std::string& key) {
    const std::vector<NodeId>& replicas = cluster_.OwnersRing()->ReplicasOf(TokenOf(key));
    return std::find(replicas.begin(), replicas.end(), node) != replicas.end();
  }
  // `node`'s reconciled copy of `key`'s partition, read from its disk.
  Partition OnDisk(NodeId node, const std::string& key) {
    const std::string prefix = storage_codec::PartitionPrefix("t", key);
    const SimStorage::Contents& stored = cluster_.node(node).storage(ShardOf(TokenOf(key), 2)).contents();
    std::vector<KeyValue> entries;
    for (auto it = stored.lower_bound(prefix); it != stored.end() && it->first.compare(0, prefix.size(), prefix) == 0;
         ++it) {
      entries.push_back(KeyValue{it->first, it->second});
    }
    return storage_codec::DecodeScan(entries).partition;
  }
  // Keys node 2 replicates, written at ALL while every node is up.
  std::vector<std::string> KeysOfNode2(int count) {
    std::vector<std::string> keys;
    for (int i = 0; static_cast<int>(keys.size()) < count; i++) {
      const std::string key = "k" + std::to_string(i);
      if (Replicates(2, key)) keys.push_back(key);
    }
    return keys;
  }
};

TEST_F(RepairTest, ReplicasInAgreementSendNothing) {
  for (const std::string& key : KeysOfNode2(20)) {
    ASSERT_EQ(Call(PutRequest("t", "a", key, "v", CL_ALL), key, 1).code(), ClientResponse::OK);
  }
  const ClientResponse repaired = Repair(2);
  ASSERT_EQ(repaired.code(), ClientResponse::OK) << repaired.message();
  EXPECT_GT(repaired.repair().ranges(), 0u);
  EXPECT_EQ(repaired.repair().rows_compared(), 20u);
  EXPECT_EQ(repaired.repair().rows_differing(), 0u);
  EXPECT_EQ(repaired.repair().rows_fetched(), 0u);
  EXPECT_EQ(repaired.repair().bytes_sent(), 0u);
}

// Node 2 is down while keys are written at ONE, and others, written at
// ALL before, are deleted: a repair of node 1 brings it the rows and the
// tombstones it lacks, versions it holds already are not sent again, and a
// second repair finds nothing to send.
TEST_F(RepairTest, AReplicaThatMissedWritesAndDeletesGetsWhatItLacks) {
  const std::vector<std::string> keys = KeysOfNode2(40);
  const std::vector<std::string> deleted(keys.begin(), keys.begin() + 10);
  for (const std::string& key : deleted) {
    ASSERT_EQ(Call(PutRequest("t", "a", key, "old", CL_ALL), key, 1).code(), ClientResponse::OK);
  }
  cluster_.Crash(2);
  RunFor(3 * kSecond);
  for (const std::string& key : deleted) ASSERT_EQ(Delete(key, CL_ONE).code(), ClientResponse::OK);
  for (size_t i = 10; i < keys.size(); i++) {
    ASSERT_EQ(Call(PutRequest("t", "a", keys[i], "new", CL_ONE), keys[i], 1).code(), ClientResponse::OK);
  }
  cluster_.Restart(2);
  RunFor(3 * kSecond);
  ASSERT_TRUE(OnDisk(2, keys.back()).empty());
  ASSERT_FALSE(OnDisk(2, deleted.front()).rows.begin()->second.tombstone.has_value());

  RepairOp every_table;
  const ClientResponse repaired = Repair(1, every_table);
  ASSERT_EQ(repaired.code(), ClientResponse::OK) << repaired.message();
  // Rows node 1 does not replicate are left to other repairs.
  uint32_t shared = 0;
  for (const std::string& key : keys) {
    if (!Replicates(1, key)) continue;
    shared++;
    EXPECT_EQ(OnDisk(2, key), OnDisk(1, key)) << key;
  }
  EXPECT_EQ(repaired.repair().rows_differing(), shared);
  EXPECT_EQ(repaired.repair().rows_sent(), shared);
  for (const std::string& key : deleted) {
    if (Replicates(1, key)) EXPECT_TRUE(OnDisk(2, key).rows.begin()->second.tombstone.has_value()) << key;
  }
  // Every replica recorded, for the ranges node 1 repaired, when their
  // repair began; the crash and the restart of node 2 keep it.
  cluster_.Crash(2);
  cluster_.Restart(2);
  RunFor(1 * kSecond);
  for (const std::string& key : keys) {
    const Token token = TokenOf(key);
    for (NodeId replica : cluster_.OwnersRing()->ReplicasOf(token)) {
      const repair::RepairHistory::Repaired repaired =
          cluster_.node(replica).RepairHistory(ShardOf(token, 2)).RepairedAt("t", token);
      EXPECT_EQ(repaired.began_us > 0, Replicates(1, key)) << key << " on node " << replica;
      EXPECT_LE(repaired.began_us, simulator_.now() / kMicrosecond);
    }
  }
  const ClientResponse again = Repair(1);
  ASSERT_EQ(again.code(), ClientResponse::OK) << again.message();
  EXPECT_EQ(again.repair().rows_differing(), 0u);
  EXPECT_EQ(again.repair().rows_compared(), repaired.repair().rows_compared());
}

// Range deletions node 2 missed reach it through repair, compared and sent
// as a row of their own, and the rows they cover stop differing.
TEST_F(RepairTest, ARangeDeletionAReplicaMissedIsRepaired) {
  const std::vector<std::string> keys = KeysOfNode2(8);
  for (const std::string& key : keys) {
    for (const char* row : {"a", "b", "c"}) {
      ClientRequest put = PutRequest("t", "a", key, "v", CL_ALL);
      put.mutable_write()->set_clustering_key(row);
      ASSERT_EQ(Call(put, key, 1).code(), ClientResponse::OK);
    }
  }
  cluster_.Crash(2);
  RunFor(3 * kSecond);
  for (const std::string& key : keys) {
    ClientRequest remove;
    remove.mutable_write()->set_table("t");
    remove.mutable_write()->set_partition_key(key);
    remove.mutable_write()->set_delete_range(true);
    remove.mutable_write()->set_range_start(key == keys[0] ? "" : "b");  // the first one whole
    remove.mutable_write()->set_consistency(CL_ONE);
    ASSERT_EQ(Call(remove, key, 1).code(), ClientResponse::OK);
  }
  cluster_.Restart(2);
  RunFor(3 * kSecond);
  ASSERT_TRUE(OnDisk(2, keys[1]).range_tombstones.empty());
  const ClientResponse repaired = Repair(1);
  ASSERT_EQ(repaired.code(), ClientResponse::OK) << repaired.message();
  uint32_t shared = 0;
  for (const std::string& key : keys) {
    if (!Replicates(1, key)) continue;
    shared++;
    EXPECT_EQ(OnDisk(2, key).range_tombstones.size(), 1u) << key;
    EXPECT_EQ(OnDisk(2, key), OnDisk(1, key)) << key;
  }
  ASSERT_GT(shared, 0u);
  EXPECT_GE(repaired.repair().rows_sent(), shared);
  const ClientResponse again = Repair(1);
  ASSERT_EQ(again.code(), ClientResponse::OK) << again.message();
  EXPECT_EQ(again.repair().rows_differing(), 0u);
}

// A proposal a majority accepted and nobody committed (its proposer gone)
// is finished by the repair before it compares rows (docs/repair.md,
// "Paxos state"): every replica then holds its value. Once a later repair
// covers the round that finished it, a compaction purges the partition's
// Paxos state, and the value stays.
TEST_F(RepairTest, ARepairFinishesARoundItsProposerLeftAndALaterOneLetsItsStateGo) {
  std::string key;
  for (int i = 0; key.empty(); i++) {
    if (Replicates(1, "p" + std::to_string(i))) key = "p" + std::to_string(i);
  }
  const Token token = TokenOf(key);
  const std::vector<NodeId>& replicas = cluster_.OwnersRing()->ReplicasOf(token);
  Envelope accept;
  Proposal& proposal = *accept.mutable_paxos_accept()->mutable_proposal();
  proposal.mutable_ballot()->set_micros(simulator_.now() / kMicrosecond);
  proposal.mutable_ballot()->set_unique(BallotUnique(3, 1, BallotLayout::kMaxNonce, 1));
  *proposal.mutable_origin() = proposal.ballot();
  PartitionData& mutation = *proposal.mutable_mutation();
  mutation.set_table("t");
  mutation.set_partition_key(key);
  CellData& cell = *mutation.add_rows()->add_cells();
  cell.set_column("a");
  cell.set_value("chosen");
  cell.set_timestamp(proposal.ballot().micros());
  for (size_t i = 0; i < 2; i++) {
    cluster_.network().Send(Address{client_, 0}, Address{replicas[i], ShardOf(token, 2)}, accept);
  }
  RunFor(100 * kMillisecond);
  ASSERT_TRUE(OnDisk(replicas[2], key).empty());

  const ClientResponse repaired = Repair(1);
  ASSERT_EQ(repaired.code(), ClientResponse::OK) << repaired.message();
  EXPECT_EQ(repaired.repair().paxos_rounds_finished(), 1u);
  for (NodeId replica : replicas) {
    const Partition held = OnDisk(replica, key);
    ASSERT_EQ(held.rows.size(), 1u) << "node " << replica;
    EXPECT_EQ(held.rows.begin()->second.cells.at("a").value, "chosen") << "node " << replica;
  }
  ClientRequest compact;
  compact.mutable_compact();
  // The round that finished it is above the first repair's fence.
  EXPECT_EQ(Call(compact, key, 1).compacted_paxos_states(), 0u);
  ASSERT_EQ(Repair(1).code(), ClientResponse::OK);
  EXPECT_EQ(Repair(1).repair().paxos_rounds_finished(), 0u);
  EXPECT_GE(Call(compact, key, 1).compacted_paxos_states(), 1u);
  for (NodeId replica : replicas) {
    EXPECT_EQ(OnDisk(replica, key).rows.begin()->second.cells.at("a").value, "chosen") << "node " << replica;
  }
}

// A repair beside clients (docs/repair.md, "Beside clients"): after a
// round during which its shard coordinated client requests, the next is
// small and waits; alone, it never waits.
TEST_F(RepairTest, ARepairYieldsToClientsBetweenRounds) {
  const std::vector<std::string> keys = KeysOfNode2(600);
  for (const std::string& key : keys) {
    ASSERT_EQ(Call(PutRequest("t", "a", key, "v", CL_ALL), key, 1).code(), ClientResponse::OK);
  }
  ASSERT_EQ(Repair(1).code(), ClientResponse::OK);
  EXPECT_EQ(MetricTotals(cluster_)["repair_rounds_yielded"], 0u);
  // Node 1 repairs while it coordinates writes on each of its shards.
  ClientRequest repair = RepairRequest();
  repair.set_request_id(++sent_);
  const uint64_t repair_id = sent_;
  Envelope message;
  *message.mutable_client_request() = repair;
  cluster_.network().Send(Address{client_, 0}, Address{1, 1}, std::move(message));
  for (size_t i = 0; !answers_.count(repair_id) && i < keys.size(); i++) {
    ASSERT_EQ(Call(PutRequest("t", "a", keys[i], "w", CL_ONE), keys[i], 1).code(), ClientResponse::OK);
  }
  ASSERT_TRUE(RunUntil([&] { return answers_.count(repair_id) > 0; }, 30 * kSecond));
  EXPECT_EQ(answers_[repair_id].code(), ClientResponse::OK) << answers_[repair_id].message();
  EXPECT_GE(MetricTotals(cluster_)["repair_rounds_yielded"], 1u);
}

// Every node's primary ranges cover the ring once: after a primary-range
// repair on each node, every replica holds every row.
TEST_F(RepairTest, PrimaryRangeRepairsOnEveryNodeCoverTheRing) {
  const std::vector<std::string> keys = KeysOfNode2(30);
  cluster_.Crash(2);
  RunFor(3 * kSecond);
  for (const std::string& key : keys) {
    ASSERT_EQ(Call(PutRequest("t", "a", key, "v", CL_ONE), key, 1).code(), ClientResponse::OK);
  }
  cluster_.Restart(2);
  RunFor(3 * kSecond);
  RepairOp primary;
  primary.set_primary_range(true);
  uint64_t ranges = 0;
  for (NodeId node = 1; node <= 4; node++) {
    const ClientResponse repaired = Repair(node, primary);
    ASSERT_EQ(repaired.code(), ClientResponse::OK) << repaired.message();
    ranges += repaired.repair().ranges();
  }
  for (const std::string& key : keys) EXPECT_FALSE(OnDisk(2, key).empty()) << key;
  const ClientResponse full = Repair(1);
  EXPECT_GT(full.repair().ranges() * 4, ranges) << "a node's primary ranges are a part of its ranges";
}

// Many rounds over one range of nodes 1, 2 and 3, where node 2 lacks
// every third row and node 3 the next ones: each replica's round reaches
// another row, and a round must end where the shortest ends, or the rows
// only the others hashed are never compared.
TEST_F(RepairTest, RoundsEndWhereEveryReplicaHashedItsRows) {
  const std::vector<NodeId> replicas = cluster_.OwnersRing()->ReplicasOf(TokenOf("k0"));
  std::vector<std::string> keys;
  for (int i = 0; keys.size() < 3 * repair::RangeRepair::kRoundRows; i++) {
    const std::string key = "r" + std::to_string(i);
    if (cluster_.OwnersRing()->ReplicasOf(TokenOf(key)) == replicas && ShardOf(TokenOf(key), 2) == 0) {
      keys.push_back(key);
    }
  }
  for (int phase = 0; phase < 3; phase++) {
    // Phases 0 and 1: replicas[1], then replicas[2], are down.
    if (phase < 2) cluster_.Crash(replicas[phase + 1]);
    if (phase < 2) RunFor(3 * kSecond);
    for (size_t i = phase; i < keys.size(); i += 3) {
      ASSERT_EQ(Call(PutRequest("t", "a", keys[i], "v", CL_ONE), keys[i], replicas[0]).code(), ClientResponse::OK);
    }
    if (phase < 2) cluster_.Restart(replicas[phase + 1]);
    if (phase < 2) RunFor(3 * kSecond);
  }
  const ClientResponse repaired = Repair(replicas[0]);
  ASSERT_EQ(repaired.code(), ClientResponse::OK) << repaired.message();
  for (const std::string& key : keys) {
    for (NodeId replica : replicas) EXPECT_FALSE(OnDisk(replica, key).empty()) << key << " on node " << replica;
  }
}

TEST_F(RepairTest, AReplicaThatDoesNotAnswerStopsTheRepairWithItsName) {
  ASSERT_EQ(Call(PutRequest("t", "a", "k1", "v", CL_ALL), "k1", 1).code(), ClientResponse::OK);
  cluster_.Crash(3);
  ClientRequest request = RepairRequest();
  request.set_request_id(1000);
  Envelope message;
  *message.mutable_client_request() = request;
  cluster_.network().Send(Address{client_, 0}, Address{1, 0}, std::move(message));
  ASSERT_TRUE(RunUntil([&] { return answers_.count(1000) > 0; }, 30 * kSecond));
  const ClientResponse& stopped = answers_[1000];
  EXPECT_NE(stopped.code(), ClientResponse::OK);
  EXPECT_NE(stopped.message().find("node 3 did not answer"), std::string::npos) << stopped.message();
  // No range node 3 replicates counts as repaired anywhere.
  for (int i = 0; i < 200; i++) {
    const Token token = TokenOf("k" + std::to_string(i));
    if (!Replicates(3, "k" + std::to_string(i))) continue;
    for (NodeId replica : {1, 2, 4}) {
      EXPECT_EQ(cluster_.node(replica).RepairHistory(ShardOf(token, 2)).RepairedAt("t", token).began_us, 0)
          << "token " << token << " on node " << replica;
    }
  }
}

TEST_F(RepairTest, ARequestThatCannotBeIsRefusedWithWhy) {
  RepairOp wrapping;
  wrapping.set_has_range(true);
  wrapping.set_start_token(10);
  wrapping.set_end_token(-10);
  ClientResponse refused = Repair(1, wrapping);
  EXPECT_EQ(refused.code(), ClientResponse::INVALID_REQUEST);
  EXPECT_NE(refused.message().find("wraps"), std::string::npos) << refused.message();

  RepairOp unknown;
  unknown.set_keyspace("nosuch");
  refused = Repair(1, unknown);
  EXPECT_EQ(refused.code(), ClientResponse::INVALID_REQUEST);
  EXPECT_NE(refused.message().find("nosuch"), std::string::npos) << refused.message();

  RepairOp elsewhere;
  elsewhere.set_datacenter("dc9");
  refused = Repair(1, elsewhere);
  EXPECT_EQ(refused.code(), ClientResponse::INVALID_REQUEST);
  EXPECT_NE(refused.message().find("dc9"), std::string::npos) << refused.message();

  Step(topology::Entry::Kind::kBegin);  // node 4 begins to leave
  refused = Repair(1);
  EXPECT_EQ(refused.code(), ClientResponse::INVALID_REQUEST);
  EXPECT_NE(refused.message().find("in progress"), std::string::npos) << refused.message();
}

TEST_F(RepairTest, ACompactionOfAnUnknownTableIsRefusedAndOfEveryTableCompactsStorage) {
  ClientRequest request;
  request.mutable_compact()->set_keyspace("nosuch");
  ClientResponse refused = Call(request, "k1", 1);
  EXPECT_EQ(refused.code(), ClientResponse::INVALID_REQUEST);
  EXPECT_NE(refused.message().find("nosuch"), std::string::npos) << refused.message();
  request.mutable_compact()->set_keyspace("");
  request.mutable_compact()->set_table("t");
  refused = Call(request, "k1", 1);
  EXPECT_EQ(refused.code(), ClientResponse::INVALID_REQUEST);
  EXPECT_NE(refused.message().find("keyspace"), std::string::npos) << refused.message();
  request.mutable_compact()->set_table("");
  const ClientResponse compacted = Call(request, "k1", 1);
  EXPECT_EQ(compacted.code(), ClientResponse::OK) << compacted.message();
  // After its purge each shard compacted its storage, which gives back the
  // space of what the purge deleted (rocksdb_compaction_test).
  for (uint32_t shard = 0; shard < 2; shard++) EXPECT_EQ(cluster_.node(1).storage(shard).stats().compactions, 1u);
}

// The plan: a range limits every span to it, a primary range keeps the
// spans the node is first replica of, a datacenter keeps its replicas.
TEST_F(RepairTest, ThePlanKeepsToTheRequestedRangeAndReplicas) {
  const topology::Topology& topology = cluster_.node(1).TopologyLog().topology();
  const ReplicationConfig& replication = cluster_.ring()->layout().replication;
  RepairOp within;
  within.set_has_range(true);
  within.set_start_token(-1000000000000000000);
  within.set_end_token(2000000000000000000);
  const absl::StatusOr<std::vector<repair::RepairRange>> ranges =
      repair::RangesToRepair(topology, replication, 1, within);
  ASSERT_TRUE(ranges.ok()) << ranges.status();
  ASSERT_FALSE(ranges->empty());
  for (const repair::RepairRange& range : *ranges) {
    EXPECT_GT(range.span.first, within.start_token());
    EXPECT_LE(range.span.last, within.end_token());
    EXPECT_EQ(range.replicas.size(), 3u);
    EXPECT_EQ(range.replicas.front(), 1u);
  }
  RepairOp whole, primary;
  primary.set_primary_range(true);
  const auto all = repair::RangesToRepair(topology, replication, 1, whole);
  const auto first = repair::RangesToRepair(topology, replication, 1, primary);
  ASSERT_TRUE(all.ok() && first.ok());
  for (const repair::RepairRange& range : *first) {
    EXPECT_EQ(cluster_.OwnersRing()->ReplicasOf(range.span.last).front(), 1u);
  }
  EXPECT_LT(first->size(), all->size());
  // The four nodes' primary ranges tile the ring.
  std::vector<topology::TokenSpan> spans;
  for (NodeId node = 1; node <= 4; node++) {
    const auto ranges = repair::RangesToRepair(topology, replication, node, primary);
    ASSERT_TRUE(ranges.ok());
    for (const repair::RepairRange& range : *ranges) spans.push_back(range.span);
  }
  std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  ASSERT_FALSE(spans.empty());
  EXPECT_EQ(spans.front().first, std::numeric_limits<Token>::min());
  EXPECT_EQ(spans.back().last, std::numeric_limits<Token>::max());
  for (size_t i = 1; i < spans.size(); i++) EXPECT_EQ(spans[i - 1].last + 1, spans[i].first) << i;
}

// Deletions purgeable at once, as `immediate` has them, but replays still
// dropped past the horizon (`immediate` applies them).
class NoGraceTest : public RepairTest {
 protected:
  NoGraceTest() : RepairTest("tombstone_gc: \"timeout\" gc_grace_seconds: 0") {}
};

// A logged batch that met too few live replicas stays in the batch log,
// which replays it later with the batch's timestamp. Its rows were
// deleted meanwhile and the deletes purged (the table has no grace):
// the replay's replicas drop what it carries from before their purge
// horizon, or the deleted rows come back (docs/repair.md, "Replays past
// the horizon").
TEST_F(NoGraceTest, ABatchLogReplayOlderThanAPurgeIsDroppedByItsReplicas) {
  std::vector<std::string> keys;
  for (int i = 0; keys.size() < 2; i++) {
    if (Replicates(4, "b" + std::to_string(i))) keys.push_back("b" + std::to_string(i));
  }
  // Not convicted yet: the batch is logged, and its parts time out.
  cluster_.Crash(4);
  ClientRequest batch;
  batch.mutable_batch()->set_logged(true);
  batch.mutable_batch()->set_consistency(CL_ALL);
  for (const std::string& key : keys) *batch.mutable_batch()->add_write() = PutRequest("t", "a", key, "old", CL_ALL).write();
  // The batch log applies it later.
  ASSERT_EQ(Call(batch, keys[0], 1).code(), ClientResponse::WRITE_TIMEOUT);
  for (const std::string& key : keys) ASSERT_EQ(Delete(key, CL_QUORUM).code(), ClientResponse::OK);
  RunFor(100 * kMillisecond);
  ClientRequest compact;
  compact.mutable_compact();
  for (NodeId node = 1; node <= 3; node++) ASSERT_EQ(Call(compact, keys[0], node).code(), ClientResponse::OK);
  std::map<std::string, uint64_t> metrics = MetricTotals(cluster_);
  ASSERT_EQ(metrics["batchlog_replays"], 0u);  // not due yet
  ASSERT_GE(metrics["gc_deletions_purged"], 2u);
  RunFor(10 * kSecond);
  metrics = MetricTotals(cluster_);
  EXPECT_GE(metrics["batchlog_replays"], 1u);
  EXPECT_GE(metrics["replays_dropped_past_horizon"], 1u);
  for (const std::string& key : keys) {
    for (NodeId node = 1; node <= 3; node++) {
      if (Replicates(node, key)) EXPECT_TRUE(OnDisk(node, key).empty()) << key << " on node " << node;
    }
  }
}

// A partition of more rows than a compaction reads at once, deleted whole:
// its partition tombstone goes only with the batch that holds its last
// rows, so every row it shadowed goes before it and none comes back.
TEST_F(NoGraceTest, APartitionTombstoneIsPurgedOnlyWithAllItsRows) {
  const std::string key = "big";
  for (int i = 0; i < 300; i++) {
    ClientRequest put = PutRequest("t", "a", key, "v", CL_ALL);
    put.mutable_write()->set_clustering_key(absl::StrCat("r", 1000 + i));
    ASSERT_EQ(Call(put, key, 1).code(), ClientResponse::OK);
  }
  ClientRequest remove;
  remove.mutable_write()->set_table("t");
  remove.mutable_write()->set_partition_key(key);
  remove.mutable_write()->set_delete_range(true);
  remove.mutable_write()->set_consistency(CL_ALL);
  ASSERT_EQ(Call(remove, key, 1).code(), ClientResponse::OK);
  RunFor(100 * kMillisecond);
  ClientRequest compact;
  compact.mutable_compact();
  for (NodeId node = 1; node <= 4; node++) ASSERT_EQ(Call(compact, key, node).code(), ClientResponse::OK);
  EXPECT_GE(MetricTotals(cluster_)["gc_deletions_purged"], 3u);  // the tombstone on each replica
  for (NodeId node = 1; node <= 4; node++) {
    if (Replicates(node, key)) EXPECT_TRUE(OnDisk(node, key).empty()) << "node " << node;
  }
  ClientRequest read = ::charybdis::testing::GetRequest("t", key, CL_ALL);
  read.mutable_read()->set_range(true);
  const ClientResponse rows = Call(read, key, 1);
  ASSERT_EQ(rows.code(), ClientResponse::OK);
  EXPECT_EQ(rows.rows_size(), 0);
}

class CompactionOfItsOwnTest : public RepairTest {
 protected:
  CompactionOfItsOwnTest() : RepairTest("tombstone_gc: \"immediate\"", "compaction_interval_ms: 3000") {}
};

// Each node purges and compacts on its own every compaction interval, as
// ctl compact does, without being asked.
TEST_F(CompactionOfItsOwnTest, EveryNodePurgesEachInterval) {
  const std::vector<std::string> keys = KeysOfNode2(10);
  for (const std::string& key : keys) {
    ASSERT_EQ(Call(PutRequest("t", "a", key, "v", CL_ALL), key, 1).code(), ClientResponse::OK);
    ASSERT_EQ(Delete(key, CL_ALL).code(), ClientResponse::OK);
  }
  ASSERT_FALSE(OnDisk(2, keys[0]).empty());
  RunFor(3 * kSecond);
  EXPECT_GE(MetricTotals(cluster_)["gc_deletions_purged"], 3u * keys.size());
  for (const std::string& key : keys) {
    for (NodeId node = 1; node <= 4; node++) {
      if (Replicates(node, key)) EXPECT_TRUE(OnDisk(node, key).empty()) << key << " on node " << node;
    }
  }
}

}  // namespace
}  // namespace charybdis::sim
