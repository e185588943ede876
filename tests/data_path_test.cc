// Scripted stories of the data path on a simulated 3-node cluster (RF=3,
// two shards per node), driven by a bare test client.

#include <gtest/gtest.h>

#include <limits>

#include <map>
#include <optional>
#include <set>

#include "core/batchlog/batchlog.h"
#include "core/data/storage_codec.h"
#include "core/data/token.h"
#include "sim/cluster.h"
#include "sim/convergence_check.h"
#include "sim/scenario_checks.h"
#include "sim/view_check.h"
#include "tests/history_builder.h"
#include "tests/requests.h"
#include "tests/scenario_text.h"

namespace charybdis::sim {
namespace {

using testing::BaseScenario;
using testing::MustParse;

class DataPathTest : public ::testing::Test {
 protected:
  explicit DataPathTest(const std::string& extra = "")
      : scenario_(MustParse(BaseScenario("schema { table { name: \"t\" column: \"a\" column: \"b\" } }" + extra))),
        buggify_(false, Random(1)),
        cluster_(simulator_, scenario_, Random(7), buggify_) {
    client_ = cluster_.AddClient(0);
    cluster_.network().SetReceiver(Address{client_, 0}, [this](const Envelope& message) {
      if (message.has_stream_ranges_done()) return streams_done_.push_back(message.stream_ranges_done());
      responses_[message.client_response().request_id()] = message.client_response();
    });
    cluster_.StartAll();
    RunFor(500 * kMillisecond);  // everyone sees everyone
  }

  void RunFor(Nanos duration) { simulator_.RunUntil(simulator_.now() + duration); }

  // Sends and waits (up to 6 s) for the answer.
  ClientResponse Call(ClientRequest request, NodeId coordinator = 1,
                      std::optional<ShardId> shard = std::nullopt) {
    const std::string& key = request.has_write() ? request.write().partition_key()
                                                 : request.read().partition_key();
    const ShardId target = shard.value_or(ShardOf(TokenOf(key), 2));
    request.set_request_id(++last_request_);
    Envelope message;
    *message.mutable_client_request() = request;
    cluster_.network().Send(Address{client_, 0}, Address{coordinator, target}, std::move(message));
    const uint64_t id = last_request_;
    for (int i = 0; i < 600 && !responses_.count(id); i++) RunFor(10 * kMillisecond);
    EXPECT_TRUE(responses_.count(id)) << "no answer";
    return responses_[id];
  }

  static ClientRequest Put(const std::string& key, const std::string& value, ConsistencyLevel level,
                           const std::string& clustering = "", uint32_t ttl = 0) {
    ClientRequest request = ::charybdis::testing::PutRequest("t", "a", key, value, level);
    request.mutable_write()->set_clustering_key(clustering);
    request.mutable_write()->set_ttl_seconds(ttl);
    return request;
  }
  static ClientRequest Get(const std::string& key, ConsistencyLevel level) {
    return ::charybdis::testing::GetRequest("t", key, level);
  }
  static std::optional<std::string> ValueOf(const ClientResponse& response) {
    if (response.rows_size() == 0) return std::nullopt;
    return ::charybdis::testing::FirstValue(response);
  }
  uint64_t Metric(const std::string& name) { return MetricTotals(cluster_)[name]; }
  // Node 3 goes down and is convicted; a QUORUM write of k leaves it a hint.
  void LeaveNode3AHint() {
    cluster_.Crash(3);
    RunFor(1000 * kMillisecond);
    ASSERT_EQ(Call(Put("k", "v", CL_QUORUM)).code(), ClientResponse::OK);
    RunFor(100 * kMillisecond);
    ASSERT_EQ(Metric("hints_written"), 1u);
  }

  Simulator simulator_;
  LoadedScenario scenario_;
  SimBuggify buggify_;
  Cluster cluster_;
  NodeId client_ = 0;
  uint64_t last_request_ = 0;
  std::map<uint64_t, ClientResponse> responses_;
  std::vector<StreamRangesDone> streams_done_;
};

// views_converge: every running node sees exactly the running nodes as
// up. It fails while a node is cut off, and after a crash until the
// others convict it; it passes once the partition heals.
TEST_F(DataPathTest, ViewsConvergeOnlyOnceEveryNodeSeesTheRunningOnes) {
  EXPECT_TRUE(CheckViewsConverge(cluster_).passed);
  cluster_.Partition({3}, {1, 2}, /*one_way=*/false);
  RunFor(2 * kSecond);  // convicted on both sides
  const CheckResult cut = CheckViewsConverge(cluster_);
  EXPECT_FALSE(cut.passed) << cut.detail;
  cluster_.Heal();
  RunFor(2 * kSecond);
  EXPECT_TRUE(CheckViewsConverge(cluster_).passed);
  cluster_.Crash(2);
  EXPECT_FALSE(CheckViewsConverge(cluster_).passed) << "nodes 1 and 3 still see node 2 up";
  RunFor(2 * kSecond);
  const CheckResult convicted = CheckViewsConverge(cluster_);
  EXPECT_TRUE(convicted.passed) << convicted.detail;
}

// batchlog_drained: it fails while any running node's batch log holds an
// entry, and says whose.
TEST_F(DataPathTest, ABatchLogEntryLeftFailsBatchlogDrained) {
  EXPECT_TRUE(CheckBatchlogDrained(cluster_).passed);
  WriteBatch entry;
  entry.Put(Batchlog::EntryPrefix() + "left", "");
  cluster_.node(2).storage(0).Apply(std::move(entry), Durability::kSynced, [](absl::Status) {});
  RunFor(10 * kMillisecond);
  const CheckResult left = CheckBatchlogDrained(cluster_);
  EXPECT_FALSE(left.passed);
  EXPECT_NE(left.detail.find("node 2: 1"), std::string::npos) << left.detail;
}

TEST_F(DataPathTest, QuorumWriteThenRead) {
  const ClientResponse written = Call(Put("k", "v1", CL_QUORUM));
  ASSERT_EQ(written.code(), ClientResponse::OK) << written.message();
  EXPECT_GT(written.write_timestamp(), 0);
  const ClientResponse read = Call(Get("k", CL_QUORUM), 2);
  ASSERT_EQ(read.code(), ClientResponse::OK);
  EXPECT_EQ(ValueOf(read), "v1");
  EXPECT_EQ(read.newest_timestamp(), written.write_timestamp());
  EXPECT_EQ(Metric("replica_writes_sent"), 3u);
  EXPECT_EQ(Metric("replica_reads_sent"), 2u);  // data from one, a digest from another
}

// One acknowledged write of key "k" to table "t" in a history.
History AcknowledgedWrite(ConsistencyLevel level, Timestamp timestamp) {
  testing::HistoryBuilder builder;
  builder.Completed(1, HistoryOp::Type::kOk, HistoryOp::Function::kWrite, level, timestamp, "v");
  for (HistoryOp& op : builder.history_) op.table = "t";
  return builder.history_;
}

TEST_F(DataPathTest, AcknowledgedWritesKeptLooksOnTheReplicasDisks) {
  const ClientResponse written = Call(Put("k", "v", CL_ONE));
  ASSERT_EQ(written.code(), ClientResponse::OK);
  RunFor(100 * kMillisecond);  // on every replica
  const Timestamp at = written.write_timestamp();
  EXPECT_TRUE(CheckAcknowledgedWritesKept(cluster_, AcknowledgedWrite(CL_ANY, at)).passed);
  EXPECT_TRUE(CheckAcknowledgedWritesKept(cluster_, AcknowledgedWrite(CL_ONE, at - 1)).passed)
      << "a newer version on disk keeps an older write";
  const CheckResult lost = CheckAcknowledgedWritesKept(cluster_, AcknowledgedWrite(CL_ANY, at + 1));
  EXPECT_FALSE(lost.passed);
  EXPECT_NE(lost.detail.find("1 of 1 acknowledged writes lost"), std::string::npos) << lost.detail;
  // Paxos writes are left out, and a check with nothing left fails.
  const CheckResult serial = CheckAcknowledgedWritesKept(cluster_, AcknowledgedWrite(CL_SERIAL, at + 1));
  EXPECT_TRUE(serial.nothing_checked);
  EXPECT_FALSE(serial.passed);
  for (NodeId node : {1, 2, 3}) cluster_.Crash(node);
  EXPECT_TRUE(CheckAcknowledgedWritesKept(cluster_, AcknowledgedWrite(CL_ANY, at + 1)).nothing_checked)
      << "with every replica down the write is not checked";
}

TEST_F(DataPathTest, ATracedWriteAnswersWithItsTimelineAcrossReplicas) {
  ClientRequest request = Put("k", "v", CL_QUORUM);
  request.set_trace(true);
  const ClientResponse response = Call(request);
  ASSERT_EQ(response.code(), ClientResponse::OK) << response.message();
  std::map<std::string, int> steps;
  std::set<uint32_t> durable_on;
  for (const TraceEvent& step : response.trace()) {
    steps[step.what().substr(0, step.what().find(" from "))]++;
    if (step.what() == "write durable") durable_on.insert(step.node());
  }
  EXPECT_EQ(steps["received client_request"], 1);
  int sent_to_replicas = 0;
  for (const TraceEvent& step : response.trace()) sent_to_replicas += step.what().rfind("sent replica_write to", 0) == 0;
  EXPECT_EQ(sent_to_replicas, 3);
  // A quorum's steps came back with their acks: received, durable, acked.
  EXPECT_GE(steps["received replica_write"], 2);
  EXPECT_GE(durable_on.size(), 2u);
  EXPECT_GE(steps["received replica_write_ack"], 2);
  ASSERT_GT(response.trace_size(), 0);
  EXPECT_EQ(response.trace(response.trace_size() - 1).what().rfind("sent client_response", 0), 0u);
  EXPECT_EQ(Call(Put("k2", "v", CL_QUORUM)).trace_size(), 0) << "untraced requests carry nothing";
}

ClientRequest ScanAll(uint32_t limit, ConsistencyLevel level) {
  ClientRequest request;
  ScanOp* scan = request.mutable_scan();
  scan->set_table("t");
  scan->set_start_token(std::numeric_limits<int64_t>::min());
  scan->set_end_token(std::numeric_limits<int64_t>::max());
  scan->set_limit(limit);
  scan->set_consistency(level);
  return request;
}

TEST_F(DataPathTest, ATracedScanAnswersWithItsTimeline) {
  ASSERT_EQ(Call(Put("k", "v", CL_QUORUM)).code(), ClientResponse::OK);
  ClientRequest request = ScanAll(100, CL_QUORUM);
  request.set_trace(true);
  // A traced scan reads the replicas' storage through the tracing wrapper.
  const ClientResponse response = Call(request, 1, 0);
  ASSERT_EQ(response.code(), ClientResponse::OK) << response.message();
  EXPECT_EQ(response.rows_size(), 1);
  int scans_done = 0;
  for (const TraceEvent& step : response.trace()) scans_done += step.what() == "scan done";
  EXPECT_GE(scans_done, 1);
}

TEST_F(DataPathTest, AScanStopsAtItsLimitAndAnswersEvenWhenReplicasAreSilent) {
  // Rows of one partition: more than the limit in one replica's answer.
  for (int i = 0; i < 5; i++) ASSERT_EQ(Call(Put("k", "v", CL_ALL, "c" + std::to_string(i))).code(), ClientResponse::OK);
  const ClientResponse some = Call(ScanAll(2, CL_QUORUM), 1, 0);
  ASSERT_EQ(some.code(), ClientResponse::OK) << some.message();
  EXPECT_EQ(some.rows_size(), 2);
  EXPECT_EQ(Call(ScanAll(100, CL_QUORUM), 1, 0).rows_size(), 5);
  cluster_.Crash(2);
  cluster_.Crash(3);  // not yet convicted: the coordinator still asks them
  const ClientResponse timed_out = Call(ScanAll(100, CL_QUORUM), 1, 0);
  EXPECT_EQ(timed_out.code(), ClientResponse::READ_TIMEOUT) << timed_out.message();
  EXPECT_EQ(timed_out.blocked_for(), 2u);
  EXPECT_LE(timed_out.received(), 1u);
}

TEST_F(DataPathTest, BadRequestsAreRejectedWithAReason) {
  auto rejected = [&](ClientRequest request, const std::string& why) {
    const ClientResponse response = Call(request);
    EXPECT_EQ(response.code(), ClientResponse::INVALID_REQUEST);
    EXPECT_NE(response.message().find(why), std::string::npos) << response.message();
  };
  ClientRequest unknown_table = Get("k", CL_ONE);
  unknown_table.mutable_read()->set_table("nope");
  rejected(unknown_table, "unknown table \"nope\"");
  rejected(Get("k", CL_ANY), "ANY is for writes only");
  rejected(Get("k", CL_EACH_QUORUM), "EACH_QUORUM is for writes only");
  rejected(Put("k", "v", CL_SERIAL), "SERIAL is for conditional updates");
  ClientRequest unknown_column = Put("k", "v", CL_ONE);
  unknown_column.mutable_write()->mutable_put(0)->set_column("zz");
  rejected(unknown_column, "unknown column \"zz\"");
  rejected(Put("", "v", CL_ONE), "partition key may not be empty");
  EXPECT_EQ(Metric("replica_writes_sent"), 0u);
}

TEST_F(DataPathTest, TooFewLiveReplicasIsUnavailableBeforeAnythingIsSent) {
  cluster_.Crash(2);
  cluster_.Crash(3);
  RunFor(2 * kSecond);  // convicted
  const ClientResponse response = Call(Put("k", "v", CL_QUORUM));
  EXPECT_EQ(response.code(), ClientResponse::UNAVAILABLE);
  EXPECT_EQ(response.alive(), 1u);
  EXPECT_EQ(response.blocked_for(), 2u);
  EXPECT_EQ(response.consistency(), CL_QUORUM);
  // What a driver prints: the reason, beside the counts.
  EXPECT_EQ(response.message(), "not enough live replicas");
  EXPECT_EQ(Metric("replica_writes_sent"), 0u);
  EXPECT_EQ(Metric("write_unavailable"), 1u);
  EXPECT_EQ(Call(Put("k", "v", CL_ONE)).code(), ClientResponse::OK);
}

TEST_F(DataPathTest, SilentReplicasTimeOutWithCountsAndGetHints) {
  cluster_.Crash(2);
  cluster_.Crash(3);  // not yet convicted: the coordinator still sends to them
  const ClientResponse response = Call(Put("k", "v", CL_QUORUM));
  EXPECT_EQ(response.code(), ClientResponse::WRITE_TIMEOUT);
  EXPECT_EQ(response.received(), 1u);
  EXPECT_EQ(response.blocked_for(), 2u);
  EXPECT_EQ(response.write_type(), "SIMPLE");
  RunFor(100 * kMillisecond);
  EXPECT_EQ(Metric("hints_written"), 2u);
  cluster_.Restart(2);
  cluster_.Restart(3);
  RunFor(3 * kSecond);
  EXPECT_EQ(Metric("hints_sent"), 2u);
  EXPECT_EQ(ValueOf(Call(Get("k", CL_ONE), 3, ShardOf(TokenOf("k"), 2))), "v");
}

// Without hints, node 3 misses what was written while it was down, until it
// streams the whole ring from node 1 (core/replica/stream_jobs.h): each of
// its shards copies its part, and asking again once done copies nothing.
class StreamingTest : public DataPathTest {
 protected:
  StreamingTest() : DataPathTest("coordinator { disable_hinted_handoff: true }") {}

  // Asks every shard of node 3 to stream from node 1, and waits for both.
  std::vector<StreamRangesDone> StreamEverythingTo3(const std::string& name) {
    streams_done_.clear();
    for (ShardId shard = 0; shard < 2; shard++) {
      Envelope message;
      StreamRanges& request = *message.mutable_stream_ranges();
      request.set_request_id(100 + shard);
      request.set_name(name);
      request.set_source(1);
      StreamRanges::Range& range = *request.add_range();
      range.set_start_token(std::numeric_limits<int64_t>::min());
      range.set_end_token(std::numeric_limits<int64_t>::max());
      cluster_.network().Send(Address{client_, 0}, Address{3, shard}, std::move(message));
    }
    for (int i = 0; i < 500 && streams_done_.size() < 2; i++) RunFor(10 * kMillisecond);
    EXPECT_EQ(streams_done_.size(), 2u);
    return streams_done_;
  }
  std::optional<std::string> ReadOn3(const std::string& key) {
    return ValueOf(Call(Get(key, CL_ONE), 3, ShardOf(TokenOf(key), 2)));
  }
};

TEST_F(StreamingTest, ANodeThatMissedWritesGetsThemByStreaming) {
  cluster_.Crash(3);
  RunFor(1000 * kMillisecond);
  for (int i = 0; i < 20; i++) ASSERT_EQ(Call(Put("k" + std::to_string(i), "v", CL_QUORUM)).code(), ClientResponse::OK);
  cluster_.Restart(3);
  RunFor(1000 * kMillisecond);
  EXPECT_EQ(ReadOn3("k7"), std::nullopt) << "node 3 reads its own copy first, and has none";

  uint64_t pairs = 0;
  for (const StreamRangesDone& done : StreamEverythingTo3("catch-up")) {
    EXPECT_TRUE(done.ok()) << done.message();
    pairs += done.pairs();
  }
  EXPECT_GE(pairs, 20u);  // a cell each, and the schema log's rows
  for (int i = 0; i < 20; i++) EXPECT_EQ(ReadOn3("k" + std::to_string(i)), "v") << i;

  for (const StreamRangesDone& done : StreamEverythingTo3("catch-up")) {
    EXPECT_TRUE(done.ok()) << done.message();
    EXPECT_EQ(done.pairs(), 0u) << "done streams stay done";
  }
  Envelope bad;
  bad.mutable_stream_ranges()->set_name("self");
  bad.mutable_stream_ranges()->set_source(3);
  streams_done_.clear();
  cluster_.network().Send(Address{client_, 0}, Address{3, 0}, std::move(bad));
  RunFor(100 * kMillisecond);
  ASSERT_EQ(streams_done_.size(), 1u);
  EXPECT_FALSE(streams_done_[0].ok());
  EXPECT_NE(streams_done_[0].message().find("a source other than the receiver"), std::string::npos);
}

// A pair on the source that does not check out fails its shard's job,
// whatever the other streams of the job do; the other shard's job is done.
TEST_F(StreamingTest, AStreamOfACorruptPairFailsItsShardsJob) {
  for (int i = 0; i < 20; i++) ASSERT_EQ(Call(Put("k" + std::to_string(i), "v", CL_ALL)).code(), ClientResponse::OK);
  const ShardId broken = ShardOf(TokenOf("k7"), 2);
  Partition partition;
  partition.rows[""].cells["a"] = Cell{1, false, "x", 0, 0};
  WriteBatch batch;
  storage_codec::AddMutation("t", "k7", partition, batch);
  batch.operations[0].value = "not sealed";
  cluster_.node(1).storage(broken).Apply(std::move(batch), Durability::kSynced, [](absl::Status) {});
  RunFor(100 * kMillisecond);
  for (const StreamRangesDone& done : StreamEverythingTo3("broken")) {
    if (done.request_id() == 100 + broken) {
      EXPECT_FALSE(done.ok());
      EXPECT_NE(done.message().find("does not check out"), std::string::npos) << done.message();
    } else {
      EXPECT_TRUE(done.ok()) << done.message();
    }
  }
}

// Hint replay ticks once a minute here: a hint must go out when its target
// comes back, not at the next tick.
class HintReplayTest : public DataPathTest {
 protected:
  HintReplayTest() : DataPathTest("coordinator { hint_replay_interval_ms: 60000 }") {}
};

TEST_F(HintReplayTest, HintsGoOutWhenTheirTargetComesBack) {
  LeaveNode3AHint();
  if (HasFatalFailure()) return;
  cluster_.Restart(3);
  RunFor(3 * kSecond);  // seen up again within a second or so; the tick is a minute away
  EXPECT_EQ(Metric("hints_sent"), 1u);
  EXPECT_EQ(ValueOf(Call(Get("k", CL_ONE), 3, ShardOf(TokenOf("k"), 2))), "v");
}

TEST_F(DataPathTest, AHintWhoseReplayWasLostIsSentAgain) {
  LeaveNode3AHint();
  if (HasFatalFailure()) return;
  cluster_.Restart(3);
  cluster_.Partition({1}, {3}, /*one_way=*/true);  // 1 hears 3 is up; its replays are lost
  RunFor(3 * kSecond);                             // the first replay times out
  EXPECT_EQ(Metric("hints_sent"), 0u);
  cluster_.Heal();
  RunFor(3 * kSecond);
  EXPECT_EQ(Metric("hints_sent"), 1u);
}

// Hints are kept for targets down less than 300 ms here.
class HintWindowTest : public DataPathTest {
 protected:
  HintWindowTest() : DataPathTest("coordinator { max_hint_window_ms: 300 }") {}
};

TEST_F(HintWindowTest, ATargetDownLongerThanTheWindowGetsNoHintsAndTheDropIsCounted) {
  cluster_.Crash(3);
  RunFor(1500 * kMillisecond);  // convicted, and down longer than the window
  ASSERT_EQ(Call(Put("k", "v", CL_QUORUM)).code(), ClientResponse::OK);
  RunFor(100 * kMillisecond);
  EXPECT_EQ(Metric("hints_written"), 0u);
  EXPECT_EQ(Metric("hints_dropped"), 1u);
}

TEST_F(DataPathTest, ARequestOnTheWrongShardIsForwarded) {
  const ShardId owner = ShardOf(TokenOf("k"), 2);
  const ClientResponse response = Call(Put("k", "v", CL_ONE), 1, 1 - owner);
  EXPECT_EQ(response.code(), ClientResponse::OK);
  EXPECT_EQ(Metric("cross_shard_ops"), 1u);
  Call(Put("k", "v", CL_ONE), 1, owner);
  EXPECT_EQ(Metric("cross_shard_ops"), 1u);
}

TEST_F(DataPathTest, BlockingReadRepairFixesAStaleReplicaBeforeAnswering) {
  Call(Put("k", "old", CL_ALL));
  cluster_.Partition({3}, {}, false);
  cluster_.Partition({3}, {1, 2}, false);
  ASSERT_EQ(Call(Put("k", "new", CL_ONE), 1).code(), ClientResponse::OK);  // 3 misses it
  RunFor(100 * kMillisecond);
  cluster_.Heal();
  // Coordinator 3 reads itself (stale) and one other replica: they differ.
  const ClientResponse read = Call(Get("k", CL_ALL), 3);
  ASSERT_EQ(read.code(), ClientResponse::OK);
  EXPECT_EQ(ValueOf(read), "new");
  EXPECT_EQ(Metric("foreground_read_repairs"), 1u);
  // Node 3 now holds the new value itself.
  cluster_.Partition({3}, {1, 2}, false);
  EXPECT_EQ(ValueOf(Call(Get("k", CL_ONE), 3)), "new");
}

// A range deletion node 3 missed: a read through node 3 merges it with the
// others' (the rows it covers do not come back), and read repair gives it
// to node 3, which then serves it alone. A range deletion refused: one
// that deletes anything beside its range, or an empty range.
TEST_F(DataPathTest, ReadRepairCarriesARangeDeletion) {
  for (const char* row : {"a", "b", "c", "d"}) ASSERT_EQ(Call(Put("p", row, CL_ALL, row)).code(), ClientResponse::OK);
  cluster_.Partition({3}, {1, 2}, false);
  ClientRequest remove;
  WriteOp& write = *remove.mutable_write();
  write.set_table("t");
  write.set_partition_key("p");
  write.set_delete_range(true);
  write.set_range_start("b");
  write.set_range_end("d");
  write.set_consistency(CL_ONE);
  ASSERT_EQ(Call(remove).code(), ClientResponse::OK);  // 3 misses it
  RunFor(100 * kMillisecond);
  cluster_.Heal();
  const auto keys = [](const ClientResponse& response) {
    std::vector<std::string> keys;
    for (const ResultRow& row : response.rows()) keys.push_back(row.clustering_key());
    return keys;
  };
  ClientRequest all = Get("p", CL_ALL);
  all.mutable_read()->set_range(true);
  EXPECT_EQ(keys(Call(all, 3)), (std::vector<std::string>{"a", "d"}));
  EXPECT_GE(Metric("foreground_read_repairs"), 1u);
  cluster_.Partition({3}, {1, 2}, false);
  ClientRequest one = all;
  one.mutable_read()->set_consistency(CL_ONE);
  EXPECT_EQ(keys(Call(one, 3)), (std::vector<std::string>{"a", "d"}));
  cluster_.Heal();

  ClientRequest mixed = remove;
  mixed.mutable_write()->set_delete_row(true);
  EXPECT_EQ(Call(mixed).code(), ClientResponse::INVALID_REQUEST);
  ClientRequest empty = remove;
  empty.mutable_write()->set_range_end("b");
  EXPECT_EQ(Call(empty).code(), ClientResponse::INVALID_REQUEST);
}

// A range read with a limit reads that many stored rows on each replica
// and says where it stopped, unless all it read was dead. Node 3 missed rows d and e: it holds a, b, c
// and nothing after, node 1 holds more. Their answers hold the same rows,
// but not the same range, so they must not agree: node 3's alone would
// say the partition ends at c, and lose d and e, written at QUORUM.
TEST_F(DataPathTest, ALimitedReadStopsWhereTheFirstReplicaStopped) {
  for (const char* row : {"a", "b", "c"}) ASSERT_EQ(Call(Put("p", row, CL_ALL, row)).code(), ClientResponse::OK);
  cluster_.Partition({3}, {1, 2}, false);
  for (const char* row : {"d", "e"}) ASSERT_EQ(Call(Put("p", row, CL_QUORUM, row)).code(), ClientResponse::OK);
  cluster_.Heal();
  const auto keys = [](const ClientResponse& response) {
    std::vector<std::string> keys;
    for (const ResultRow& row : response.rows()) keys.push_back(row.clustering_key());
    return keys;
  };
  ClientRequest page = Get("p", CL_QUORUM);
  page.mutable_read()->set_range(true);
  page.mutable_read()->set_limit(3);
  const ClientResponse first = Call(page, 3);  // node 3 sends the data
  ASSERT_EQ(first.code(), ClientResponse::OK);
  EXPECT_EQ(keys(first), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(first.read_cut());
  EXPECT_EQ(first.read_through(), "c");
  page.mutable_read()->set_start(first.read_through() + std::string(1, '\0'));
  const ClientResponse rest = Call(page, 3);
  EXPECT_EQ(keys(rest), (std::vector<std::string>{"d", "e"}));
  EXPECT_FALSE(rest.read_cut());

  // Dead rows count toward the limit: the read stops after them, with
  // fewer live rows than the limit, and no row past where it stopped.
  const auto remove = [this](const char* row) {
    ClientRequest deletion;
    deletion.mutable_write()->set_table("t");
    deletion.mutable_write()->set_partition_key("p");
    deletion.mutable_write()->set_clustering_key(row);
    deletion.mutable_write()->set_delete_row(true);
    deletion.mutable_write()->set_consistency(CL_ALL);
    return Call(deletion).code();
  };
  for (const char* row : {"a", "b"}) ASSERT_EQ(remove(row), ClientResponse::OK);
  page.mutable_read()->set_start("");
  page.mutable_read()->set_consistency(CL_ALL);
  const ClientResponse thinned = Call(page, 3);
  EXPECT_EQ(keys(thinned), (std::vector<std::string>{"c"}));
  EXPECT_TRUE(thinned.read_cut());
  EXPECT_EQ(thinned.read_through(), "c");

  // A read whose limit holds only dead rows reads on past them: an answer
  // with no row that says more may follow would end a driver's paging.
  ASSERT_EQ(remove("c"), ClientResponse::OK);
  const ClientResponse past_dead = Call(page, 3);
  EXPECT_EQ(keys(past_dead), (std::vector<std::string>{"d", "e"}));
  EXPECT_FALSE(past_dead.read_cut());
}

TEST_F(DataPathTest, TtlRowTombstonesAndRanges) {
  Call(Put("p", "x", CL_ALL, "a"));
  Call(Put("p", "y", CL_ALL, "b"));
  Call(Put("p", "z", CL_ALL, "c", /*ttl=*/1));
  ClientRequest range = Get("p", CL_QUORUM);
  range.mutable_read()->set_range(true);
  range.mutable_read()->set_start("a");
  range.mutable_read()->set_end("c");
  ClientResponse rows = Call(range);
  ASSERT_EQ(rows.rows_size(), 2);
  EXPECT_EQ(rows.rows(1).clustering_key(), "b");

  range.mutable_read()->set_end("");
  EXPECT_EQ(Call(range).rows_size(), 3);
  RunFor(1500 * kMillisecond);  // row c expires
  EXPECT_EQ(Call(range).rows_size(), 2);

  ClientRequest remove;
  remove.mutable_write()->set_table("t");
  remove.mutable_write()->set_partition_key("p");
  remove.mutable_write()->set_clustering_key("a");
  remove.mutable_write()->set_delete_row(true);
  remove.mutable_write()->set_consistency(CL_QUORUM);
  const ClientResponse deleted = Call(remove);
  ASSERT_EQ(deleted.code(), ClientResponse::OK);
  rows = Call(range);
  ASSERT_EQ(rows.rows_size(), 1);
  EXPECT_EQ(rows.rows(0).clustering_key(), "b");
  EXPECT_GE(rows.newest_timestamp(), deleted.write_timestamp());
}

TEST_F(DataPathTest, CellTombstonesDeleteOneColumn) {
  ClientRequest both = Put("k", "x", CL_ALL);
  ColumnValue* b = both.mutable_write()->add_put();
  b->set_column("b");
  b->set_value("y");
  Call(both);
  ClientRequest remove;
  remove.mutable_write()->set_table("t");
  remove.mutable_write()->set_partition_key("k");
  remove.mutable_write()->add_delete_column("a");
  remove.mutable_write()->set_consistency(CL_ALL);
  ASSERT_EQ(Call(remove).code(), ClientResponse::OK);
  const ClientResponse read = Call(Get("k", CL_ONE));
  ASSERT_EQ(read.rows_size(), 1);
  ASSERT_EQ(read.rows(0).cells_size(), 1);
  EXPECT_EQ(read.rows(0).cells(0).column(), "b");
}

TEST_F(DataPathTest, ADuplicatedRequestRunsOnce) {
  ClientRequest request = Put("k", "v", CL_ALL);
  request.set_request_id(++last_request_);
  Envelope message;
  *message.mutable_client_request() = request;
  const Address owner{1, ShardOf(TokenOf("k"), 2)};
  cluster_.network().Send(Address{client_, 0}, owner, message);
  RunFor(50 * kMillisecond);
  cluster_.network().Send(Address{client_, 0}, owner, message);  // a late duplicate
  RunFor(50 * kMillisecond);
  EXPECT_EQ(responses_.at(last_request_).code(), ClientResponse::OK);
  EXPECT_EQ(Metric("coordinator_writes"), 1u);
  EXPECT_EQ(Metric("replica_writes_sent"), 3u);
}

TEST_F(DataPathTest, UnknownLevelsAndStrayForwardsAreRejected) {
  ClientRequest strange = Put("k", "v", static_cast<ConsistencyLevel>(42));
  EXPECT_EQ(Call(strange).code(), ClientResponse::INVALID_REQUEST);
  ClientRequest forwarded = Get("k", CL_ONE);
  forwarded.set_forwarded(true);
  const ShardId owner = ShardOf(TokenOf("k"), 2);
  EXPECT_EQ(Call(forwarded, 1, 1 - owner).code(), ClientResponse::INVALID_REQUEST);
}

TEST_F(DataPathTest, ClientTimestampsDecideLastWriteWins) {
  ClientRequest newer = Put("k", "newer", CL_ALL);
  newer.mutable_write()->set_timestamp(2000);
  ClientRequest older = Put("k", "older", CL_ALL);
  older.mutable_write()->set_timestamp(1000);
  Call(newer);
  Call(older);
  const ClientResponse read = Call(Get("k", CL_ALL));
  EXPECT_EQ(ValueOf(read), "newer");
  EXPECT_EQ(read.newest_timestamp(), 2000);
}

}  // namespace
}  // namespace charybdis::sim
