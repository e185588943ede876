// CQL statements from simulated clients: core/cql's connection, over the
// simulator's network, against a simulated 3-node cluster (RF=3, two
// shards per node) whose scenario declares the CQL schema. The same code
// that serves drivers on real nodes, deterministic here.

#include <gtest/gtest.h>

#include "core/cql/connection.h"
#include "core/cql/consistency_code.h"
#include "core/cql/functions.h"
#include "absl/strings/str_cat.h"
#include "core/data/big_endian.h"
#include "core/data/storage_codec.h"
#include "core/data/token.h"
#include "sim/cluster.h"
#include "sim/cql_backend.h"
#include "sim/cql_frames.h"
#include "sim/crash_point.h"
#include "tests/fake_env.h"
#include "tests/scenario_text.h"
#include "tests/cql_sim_fixture.h"
#include "tests/sim_cql_client.h"

namespace charybdis::sim {
namespace {


constexpr char kSchema[] = R"pb(schema {
  cql: "CREATE KEYSPACE app WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3}"
  cql: "CREATE TABLE app.accounts (id text PRIMARY KEY, balance bigint, owner text)"
  cql: "CREATE TABLE app.events (stream text, seq int, note text, PRIMARY KEY (stream, seq)) WITH CLUSTERING ORDER BY (seq DESC)"
})pb";

// Three partitions of one table in one logged batch.
constexpr char kLoggedBatch[] =
    "BEGIN BATCH INSERT INTO app.accounts (id, balance) VALUES ('x', 1); "
    "INSERT INTO app.accounts (id, balance) VALUES ('y', 2); "
    "INSERT INTO app.accounts (id, balance) VALUES ('z', 3) APPLY BATCH";

class CqlSimTest : public CqlSimFixture {
 protected:
  CqlSimTest() : CqlSimFixture(kSchema) {}

  // PREPAREs `text`: the id of the statement, "" if the answer is not Prepared.
  std::string Prepare(const std::string& text) {
    cql::Writer prepare;
    prepare.LongString(text);
    const std::string answer = client_.Send(cql::Opcode::kPrepare, prepare.Take());
    cql::Reader prepared(answer);
    if (prepared.Int() != 4) return "";  // Prepared
    return prepared.ShortBytes();
  }
  // EXECUTEs prepared statement `id` at QUORUM with one value, `value`.
  std::string Execute(const std::string& id, const std::string& value) {
    cql::Writer body;
    body.ShortBytes(id);
    body.Short(cql::ToCqlConsistency(CL_QUORUM));
    body.Byte(0x01);  // values
    body.Short(1);
    body.Bytes(value);
    return client_.Send(cql::Opcode::kExecute, body.Take());
  }

  // Every row of a SELECT, a page of `page_size` at a time; `pages` counts them.
  std::vector<std::vector<std::string>> AllPages(const std::string& text, int32_t page_size, int* pages) {
    std::vector<std::vector<std::string>> rows;
    std::optional<std::string> state;
    *pages = 0;
    do {
      const std::string body = client_.Send(cql::Opcode::kQuery, QueryBody(text, CL_QUORUM, CL_UNSET, page_size, state));
      for (auto& row : Rows(body, &state)) rows.push_back(std::move(row));
      ++*pages;
    } while (state && *pages < 1000);
    return rows;
  }

  // A SCHEMA_CHANGE result's change, target and names, space-separated.
  static std::string SchemaChangeOf(const std::string& body) {
    cql::Reader in(body);
    if (in.Int() != 5) return "not a SCHEMA_CHANGE result: " + ErrorOf(body);
    std::string change = in.String();
    for (int i = 0; i < 2 || (i == 2 && !in.AtEnd()); i++) change += " " + in.String();
    EXPECT_TRUE(in.ok() && in.AtEnd());
    return change;
  }

  // How many of kLoggedBatch's three rows a QUORUM read through `client` finds.
  static size_t BatchRowsFound(SimCqlClient& client) {
    size_t found = 0;
    for (const char* id : {"x", "y", "z"}) {
      found += Rows(client.Query(absl::StrCat("SELECT balance FROM app.accounts WHERE id = '", id, "'"), CL_QUORUM)).size();
    }
    return found;
  }

  // Every running node's schema version, by node.
  std::map<NodeId, std::string> Versions() {
    std::map<NodeId, std::string> versions;
    for (NodeId node = 1; node <= 3; node++) {
      if (cluster_.node(node).running()) versions[node] = cluster_.node(node).Schema().version;
    }
    return versions;
  }
};

TEST_F(CqlSimTest, StatementsRunOnTheSimulatedCluster) {
  EXPECT_EQ(cql::Reader(Query("INSERT INTO app.accounts (id, balance, owner) VALUES ('a', 10, 'ann')")).Int(), 1);
  EXPECT_EQ(Rows(Query("SELECT owner, balance FROM app.accounts WHERE id = 'a'")),
            (std::vector<std::vector<std::string>>{{"ann", cql::NativeBigint(10)}}));
  for (int seq = 1; seq <= 3; seq++) {
    Query("INSERT INTO app.events (stream, seq, note) VALUES ('s', " + std::to_string(seq) + ", 'n" + std::to_string(seq) + "')");
  }
  EXPECT_EQ(Rows(Query("SELECT note FROM app.events WHERE stream = 's' AND seq < 3")),
            (std::vector<std::vector<std::string>>{{"n2"}, {"n1"}}));  // DESC
  // The same slice through Paxos (a serial read returns the slice only).
  EXPECT_EQ(Rows(Query("SELECT note FROM app.events WHERE stream = 's' AND seq < 3", CL_SERIAL)),
            (std::vector<std::vector<std::string>>{{"n2"}, {"n1"}}));
  // A lightweight transaction through Paxos among the simulated replicas.
  EXPECT_EQ(Rows(Query("UPDATE app.accounts SET balance = 20 WHERE id = 'a' IF balance = 10")),
            (std::vector<std::vector<std::string>>{{cql::NativeBoolean(true)}}));
  const auto failed = Rows(Query("UPDATE app.accounts SET balance = 30 WHERE id = 'a' IF balance = 10"));
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0][0], cql::NativeBoolean(false));
  EXPECT_EQ(Rows(Query("SELECT balance FROM app.accounts WHERE id = 'a'", CL_SERIAL)),
            (std::vector<std::vector<std::string>>{{cql::NativeBigint(20)}}));
}

TEST_F(CqlSimTest, ANodeDownMakesAllUnavailableAndLeavesQuorum) {
  cluster_.Crash(3);
  simulator_.RunUntil(simulator_.now() + 2000 * kMillisecond);  // convicted
  EXPECT_EQ(cql::Reader(Query("INSERT INTO app.accounts (id, owner) VALUES ('b', 'bob')", CL_QUORUM)).Int(), 1);
  const std::string answer = Query("INSERT INTO app.accounts (id, owner) VALUES ('c', 'cy')", CL_ALL);
  cql::Reader error(answer);
  EXPECT_EQ(error.Int(), static_cast<int32_t>(cql::ErrorCode::kUnavailable));
  error.String();
  EXPECT_EQ(error.UnsignedShort(), cql::ToCqlConsistency(CL_ALL));
  EXPECT_EQ(error.Int(), 3);  // required
  EXPECT_EQ(error.Int(), 2);  // alive
}

// With node 3 down, ALL writes to keyspaces of 1 and 2 replicas: each key
// either works (its replicas are up) or is Unavailable, requiring the
// keyspace's factor, not the cluster's 3.
TEST_F(CqlSimTest, AKeyspaceReplicatesAsItsReplicationSays) {
  Query("CREATE KEYSPACE one WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
  Query("CREATE KEYSPACE two WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 2}");
  for (const char* keyspace : {"one", "two"}) {
    EXPECT_EQ(SchemaChangeOf(Query(absl::StrCat("CREATE TABLE ", keyspace, ".t (k int PRIMARY KEY, v int)"))),
              absl::StrCat("CREATED TABLE ", keyspace, " t"));
  }
  cluster_.Crash(3);
  RunFor(2000 * kMillisecond);  // convicted
  for (const auto& [keyspace, factor] : std::map<std::string, int32_t>{{"one", 1}, {"two", 2}}) {
    int written = 0, unavailable = 0;
    for (int k = 0; k < 24; k++) {
      const std::string key = std::to_string(k);
      const std::string answer = Query(absl::StrCat("INSERT INTO ", keyspace, ".t (k, v) VALUES (", key, ", 1)"), CL_ALL);
      if (ErrorCodeOf(answer) == 0) {
        written++;
        // Its replicas are up: a read at ALL and an LWT (a quorum of them) work.
        EXPECT_EQ(Rows(Query(absl::StrCat("SELECT v FROM ", keyspace, ".t WHERE k = ", key), CL_ALL)).size(), 1u);
        EXPECT_EQ(Rows(Query(absl::StrCat("UPDATE ", keyspace, ".t SET v = 2 WHERE k = ", key, " IF v = 1"))).at(0).at(0),
                  std::string(1, '\1'));  // [applied]
        continue;
      }
      unavailable++;
      cql::Reader error(answer);
      EXPECT_EQ(error.Int(), static_cast<int32_t>(cql::ErrorCode::kUnavailable)) << ErrorOf(answer);
      error.String();
      error.UnsignedShort();
      EXPECT_EQ(error.Int(), factor) << keyspace;  // required
      EXPECT_EQ(error.Int(), factor - 1) << keyspace;  // alive
    }
    EXPECT_GT(written, 0) << keyspace;
    EXPECT_GT(unavailable, 0) << keyspace;
  }
}

// SELECT without a partition key scans the table in ring order: whole,
// a page at a time, within token() bounds, counted, limited.
// An acknowledged LWT is answered after its accepts, before its commit:
// with every commit held back 300 ms, a QUORUM scan right after returns
// its row (each replica names its unfinished rounds in the scanned range;
// the coordinator finishes them, then scans again), as a QUORUM read of
// its partition does. The scan missed such rows before (found on real
// nodes: LIST ROLES right after CREATE ROLE).
TEST_F(CqlSimTest, AScanRightAfterAnLwtSeesItsRowBeforeTheCommitLands) {
  cluster_.network().set_tap([&](const Envelope& m) -> std::optional<std::vector<Nanos>> {
    if (m.has_paxos_commit()) return std::vector<Nanos>{300 * kMillisecond};
    return std::nullopt;
  });
  for (int i = 0; i < 5; i++) {
    const std::string id = absl::StrCat("lwt", i);
    EXPECT_EQ(Rows(Query(absl::StrCat("INSERT INTO app.accounts (id, balance) VALUES ('", id, "', 1) IF NOT EXISTS"))).at(0).at(0),
              std::string(1, '\1'));  // [applied]
    EXPECT_EQ(Rows(Query("SELECT id FROM app.accounts")).size(), static_cast<size_t>(i + 1)) << id;
  }
}

TEST_F(CqlSimTest, ASelectWithoutPartitionKeyScansTheRing) {
  std::set<std::pair<std::string, std::string>> written;
  for (int stream = 0; stream < 20; stream++) {
    for (int seq = 1; seq <= 3; seq++) {
      Query(absl::StrCat("INSERT INTO app.events (stream, seq, note) VALUES ('s", stream, "', ", seq, ", 'n')"));
      written.insert({absl::StrCat("s", stream), cql::NativeInt(seq)});
    }
  }
  Query("DELETE FROM app.events WHERE stream = 's7' AND seq = 2");
  written.erase({"s7", cql::NativeInt(2)});
  const auto whole = Rows(Query("SELECT stream, seq FROM app.events"));
  ASSERT_EQ(whole.size(), written.size());
  std::set<std::pair<std::string, std::string>> seen;
  for (size_t i = 0; i < whole.size(); i++) {
    seen.insert({whole[i][0], whole[i][1]});
    if (i == 0) continue;
    // Ring order: tokens ascending; within a partition, seq DESC.
    const Token previous = TokenOf(whole[i - 1][0]), token = TokenOf(whole[i][0]);
    EXPECT_LE(previous, token);
    if (whole[i - 1][0] == whole[i][0]) {
      EXPECT_GT(whole[i - 1][1], whole[i][1]);
    }
  }
  EXPECT_EQ(seen, written);
  int pages = 0;
  EXPECT_EQ(AllPages("SELECT stream, seq FROM app.events", 7, &pages), whole);
  EXPECT_GE(pages, 9);
  // Four token ranges that cover the ring, as a full-scan tool splits it.
  const std::vector<std::string> bounds = {"-9223372036854775808", "-4611686018427387904", "0", "4611686018427387904",
                                           "9223372036854775807"};
  std::vector<std::vector<std::string>> ranged;
  for (size_t i = 0; i + 1 < bounds.size(); i++) {
    const std::string first = i == 0 ? ">=" : ">";
    for (auto& row : Rows(Query(absl::StrCat("SELECT stream, seq FROM app.events WHERE token(stream) ", first, " ",
                                             bounds[i], " AND token(stream) <= ", bounds[i + 1])))) {
      ranged.push_back(std::move(row));
    }
  }
  EXPECT_EQ(ranged, whole);
  const Token one = TokenOf("s3");
  EXPECT_EQ(Rows(Query(absl::StrCat("SELECT seq FROM app.events WHERE token(stream) = ", one))).size(), 3u);
  EXPECT_EQ(Rows(Query("SELECT COUNT(*) FROM app.events")), (std::vector<std::vector<std::string>>{{cql::NativeBigint(59)}}));
  EXPECT_EQ(Rows(Query("SELECT COUNT(*) FROM app.events LIMIT 10")), (std::vector<std::vector<std::string>>{{cql::NativeBigint(10)}}));
  EXPECT_EQ(Rows(Query("SELECT COUNT(*) FROM app.events WHERE token(stream) > 9223372036854775806")),
            (std::vector<std::vector<std::string>>{{cql::NativeBigint(0)}}));
  EXPECT_EQ(Rows(Query("SELECT stream, seq FROM app.events LIMIT 5")),
            std::vector<std::vector<std::string>>(whole.begin(), whole.begin() + 5));
  EXPECT_EQ(AllPages("SELECT stream, seq FROM app.events LIMIT 12", 5, &pages),
            std::vector<std::vector<std::string>>(whole.begin(), whole.begin() + 12));
  EXPECT_EQ(pages, 3);  // 5, 5, then the 2 that reach the LIMIT, with no paging state
  EXPECT_EQ(ErrorCodeOf(Query("SELECT stream FROM app.events", CL_SERIAL)), static_cast<int32_t>(cql::ErrorCode::kInvalid));
  // A serial read is one Paxos round: IN would be several, at different moments.
  EXPECT_EQ(ErrorCodeOf(Query("SELECT seq FROM app.events WHERE stream = 'a' AND seq IN (1, 2)", CL_SERIAL)),
            static_cast<int32_t>(cql::ErrorCode::kInvalid));
  EXPECT_EQ(ErrorCodeOf(Query("SELECT seq FROM app.events WHERE stream IN ('a', 'b') AND seq = 1", CL_SERIAL)),
            static_cast<int32_t>(cql::ErrorCode::kInvalid));
  EXPECT_NE(ErrorCodeOf(Query("SELECT seq FROM app.events WHERE stream = 'a' AND seq IN (1, 2)")),
            static_cast<int32_t>(cql::ErrorCode::kInvalid));
  for (const char* refused : {"SELECT * FROM app.events WHERE seq = 1", "SELECT * FROM app.events ORDER BY seq DESC",
                              "SELECT * FROM app.events WHERE token(seq) > 0",
                              "SELECT * FROM app.events WHERE token(stream) > token('a')"}) {
    EXPECT_EQ(ErrorCodeOf(Query(refused)), static_cast<int32_t>(cql::ErrorCode::kInvalid)) << refused;
  }
  // One node down: QUORUM scans every range, ALL cannot.
  cluster_.Crash(3);
  RunFor(2000 * kMillisecond);
  EXPECT_EQ(Rows(Query("SELECT stream, seq FROM app.events")), whole);
  EXPECT_EQ(ErrorCodeOf(Query("SELECT stream FROM app.events", CL_ALL)), static_cast<int32_t>(cql::ErrorCode::kUnavailable));
}

// IN on a clustering column: one slice per distinct value, in the
// table's clustering order (seq DESC here) or the ORDER BY's, paged.
TEST_F(CqlSimTest, InOnAClusteringColumnReadsEachValueInOrder) {
  for (int seq = 1; seq <= 5; seq++) {
    Query(absl::StrCat("INSERT INTO app.events (stream, seq, note) VALUES ('in', ", seq, ", 'n", seq, "')"));
  }
  const auto notes = [](const std::vector<std::vector<std::string>>& rows) {
    std::vector<std::string> out;
    for (const auto& row : rows) out.push_back(row.at(0));
    return out;
  };
  EXPECT_EQ(notes(Rows(Query("SELECT note FROM app.events WHERE stream = 'in' AND seq IN (3, 1, 3, 9, 5)"))),
            (std::vector<std::string>{"n5", "n3", "n1"}));
  EXPECT_EQ(notes(Rows(Query("SELECT note FROM app.events WHERE stream = 'in' AND seq IN (3, 1, 5) ORDER BY seq ASC"))),
            (std::vector<std::string>{"n1", "n3", "n5"}));
  int pages = 0;
  EXPECT_EQ(notes(AllPages("SELECT note FROM app.events WHERE stream IN ('in', 'none') AND seq IN (2, 4)", 1, &pages)),
            (std::vector<std::string>{"n4", "n2"}));
  EXPECT_GE(pages, 2);
  EXPECT_TRUE(Rows(Query("SELECT note FROM app.events WHERE stream = 'in' AND seq IN ()")).empty());
}

// A counter of every running node's shards, summed.
uint64_t CounterSum(::charybdis::sim::Cluster& cluster, const std::string& name) {
  uint64_t sum = 0;
  for (NodeId node = 1; node <= 3; node++) {
    if (!cluster.node(node).running()) continue;
    for (ShardId shard = 0; shard < 2; shard++) sum += cluster.node(node).Counters(shard)[name];
  }
  return sum;
}

TEST_F(CqlSimTest, ALoggedBatchIsLoggedThenWrittenThenForgotten) {
  EXPECT_EQ(cql::Reader(Query(kLoggedBatch)).Int(), 1);  // Void
  EXPECT_EQ(BatchRowsFound(client_), 3u);
  EXPECT_EQ(CounterSum(cluster_, "batches_logged"), 1u);
  RunFor(10 * kSecond);  // long past the replay time: the entries were removed
  EXPECT_EQ(CounterSum(cluster_, "batchlog_replays"), 0u);
  // An unlogged batch skips the log.
  Query("BEGIN UNLOGGED BATCH INSERT INTO app.accounts (id) VALUES ('u'); INSERT INTO app.accounts (id) VALUES ('v') APPLY BATCH");
  EXPECT_EQ(CounterSum(cluster_, "batches_logged"), 1u);
}

// The coordinator dies once the batch is in the batch log of node 2 and
// before it sent a single write: node 2 replays the whole batch.
TEST_F(CqlSimTest, ALoggedBatchOutlivesItsCoordinator) {
  CrashPoint point;
  point.point = scenario::CrashPointFault::AFTER_REPLY;
  point.reply = Envelope::kReplicaWriteAck;  // node 2 acknowledging the batch log store
  point.fire = [this] { cluster_.Crash(1); };
  cluster_.node(2).ArmCrashPoint(std::move(point));
  client_.Submit(cql::Opcode::kQuery, QueryBody(kLoggedBatch, CL_QUORUM));
  RunFor(2500 * kMillisecond);  // node 1 is down and convicted; the replay is not due yet
  ASSERT_FALSE(cluster_.node(1).running());
  SimCqlClient survivor(simulator_, cluster_, 2);
  survivor.Startup();
  EXPECT_EQ(BatchRowsFound(survivor), 0u);  // no write left node 1
  RunFor(5 * kSecond);
  EXPECT_GE(CounterSum(cluster_, "batchlog_replays"), 1u);
  EXPECT_EQ(BatchRowsFound(survivor), 3u);
}

// Every node fails once node 2 has acknowledged storing the batch: the
// coordinator crashes, and nodes 2 and 3 lose power. The acknowledged
// entry was synced, so node 2 replays the batch after its restart.
TEST_F(CqlSimTest, ABatchLogEntryOutlivesAPowerCut) {
  CrashPoint point;
  point.point = scenario::CrashPointFault::AFTER_REPLY;
  point.reply = Envelope::kReplicaWriteAck;
  point.fire = [this] {
    cluster_.Crash(1);
    cluster_.Crash(2, CrashKind::kPowerCut);
    cluster_.Crash(3, CrashKind::kPowerCut);
  };
  cluster_.node(2).ArmCrashPoint(std::move(point));
  client_.Submit(cql::Opcode::kQuery, QueryBody(kLoggedBatch, CL_QUORUM));
  RunFor(500 * kMillisecond);
  ASSERT_FALSE(cluster_.node(2).running());
  cluster_.Restart(2);
  cluster_.Restart(3);
  RunFor(8 * kSecond);
  SimCqlClient survivor(simulator_, cluster_, 2);
  survivor.Startup();
  EXPECT_EQ(BatchRowsFound(survivor), 3u);
}

// A dropped table gives its space back (core/repair/dropped_tables.h):
// soon after the drop no node's storage holds a key of it, rows or Paxos
// states, and a table created again under its name starts empty.
TEST_F(CqlSimTest, ADroppedTableLeavesEveryNodesStorage) {
  Query("CREATE TABLE app.scratch (id int PRIMARY KEY, v text)");
  for (int i = 0; i < 40; i++) Query(absl::StrCat("INSERT INTO app.scratch (id, v) VALUES (", i, ", 'x')"));
  Query("INSERT INTO app.scratch (id, v) VALUES (100, 'y') IF NOT EXISTS");
  const cql::Table* table = cluster_.node(1).Schema().schema->FindTable("app", "scratch");
  ASSERT_NE(table, nullptr);
  const std::vector<std::string> prefixes{storage_codec::TablePrefix(table->storage),
                                          storage_codec::PaxosTablePrefix(table->storage)};
  const auto stored_keys = [&](const std::string& prefix) {
    size_t keys = 0;
    for (NodeId node = 1; node <= 3; node++) {
      for (ShardId shard = 0; shard < 2; shard++) {
        const SimStorage::Contents& contents = cluster_.node(node).storage(shard).contents();
        for (auto it = contents.lower_bound(prefix); it != contents.end() && it->first.starts_with(prefix); ++it) keys++;
      }
    }
    return keys;
  };
  ASSERT_GE(stored_keys(prefixes[0]), 3u * 41);
  ASSERT_GE(stored_keys(prefixes[1]), 3u);
  const uint64_t others = CounterSum(cluster_, "dropped_table_pairs_deleted");
  EXPECT_EQ(SchemaChangeOf(Query("DROP TABLE app.scratch")), "DROPPED TABLE app scratch");
  RunFor(2 * kSecond);
  for (const std::string& prefix : prefixes) EXPECT_EQ(stored_keys(prefix), 0u);
  EXPECT_GE(CounterSum(cluster_, "dropped_table_pairs_deleted") - others, 3u * 42);
  Query("CREATE TABLE app.scratch (id int PRIMARY KEY, v text)");
  EXPECT_TRUE(Rows(Query("SELECT * FROM app.scratch WHERE id = 3")).empty());
}

TEST_F(CqlSimTest, SchemaChangesReachEveryNodeThroughTheLog) {
  EXPECT_EQ(SchemaChangeOf(Query("CREATE KEYSPACE shop WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3}")),
            "CREATED KEYSPACE shop");
  EXPECT_EQ(SchemaChangeOf(Query("CREATE TABLE shop.items (id int PRIMARY KEY, name text)")), "CREATED TABLE shop items");
  RunFor(1000 * kMillisecond);  // heartbeats carry the log's length; the others read it
  const std::map<NodeId, std::string> versions = Versions();
  EXPECT_EQ(versions.at(2), versions.at(1));
  EXPECT_EQ(versions.at(3), versions.at(1));
  EXPECT_NE(cluster_.node(3).Schema().schema->FindTable("shop", "items"), nullptr);

  // Node 2's coordinators take the new table; node 1 reads what they wrote.
  SimCqlClient other(simulator_, cluster_, 2);
  other.Startup();
  EXPECT_EQ(ErrorCodeOf(other.Query("INSERT INTO shop.items (id, name) VALUES (1, 'pen')")), 0);
  EXPECT_EQ(Rows(Query("SELECT name FROM shop.items WHERE id = 1")), (std::vector<std::vector<std::string>>{{"pen"}}));

  EXPECT_EQ(SchemaChangeOf(Query("ALTER TABLE shop.items ADD price bigint")), "UPDATED TABLE shop items");
  EXPECT_EQ(ErrorCodeOf(Query("UPDATE shop.items SET price = 3 WHERE id = 1")), 0);
  EXPECT_EQ(Rows(Query("SELECT name, price FROM shop.items WHERE id = 1")),
            (std::vector<std::vector<std::string>>{{"pen", cql::NativeBigint(3)}}));

  // Dropped, then created again: the new table starts empty.
  EXPECT_EQ(SchemaChangeOf(Query("DROP TABLE shop.items")), "DROPPED TABLE shop items");
  EXPECT_EQ(ErrorCodeOf(Query("SELECT name FROM shop.items WHERE id = 1")), static_cast<int32_t>(cql::ErrorCode::kInvalid));
  EXPECT_EQ(SchemaChangeOf(Query("CREATE TABLE shop.items (id int PRIMARY KEY, name text)")), "CREATED TABLE shop items");
  EXPECT_TRUE(Rows(Query("SELECT name FROM shop.items WHERE id = 1")).empty());
  EXPECT_EQ(SchemaChangeOf(Query("DROP KEYSPACE shop")), "DROPPED KEYSPACE shop");
  EXPECT_EQ(cluster_.node(1).Schema().schema->FindTable("shop", "items"), nullptr);
  EXPECT_EQ(cluster_.node(1).Schema().sequence, 6u);
}

TEST_F(CqlSimTest, SchemaChangesAreRefusedAsCassandraRefusesThem) {
  EXPECT_EQ(ErrorCodeOf(Query("CREATE TABLE app.accounts (id text PRIMARY KEY)")),
            static_cast<int32_t>(cql::ErrorCode::kAlreadyExists));
  EXPECT_EQ(cql::Reader(Query("CREATE TABLE IF NOT EXISTS app.accounts (id text PRIMARY KEY)")).Int(), 1);  // Void
  EXPECT_EQ(ErrorCodeOf(Query("CREATE KEYSPACE odd WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 4}")),
            static_cast<int32_t>(cql::ErrorCode::kConfig));
  EXPECT_EQ(ErrorCodeOf(Query("CREATE KEYSPACE odd WITH replication = {'class': 'NetworkTopologyStrategy', 'dc9': 1}")),
            static_cast<int32_t>(cql::ErrorCode::kConfig));
  EXPECT_EQ(ErrorCodeOf(Query("DROP TABLE app.nothing")), static_cast<int32_t>(cql::ErrorCode::kInvalid));
  EXPECT_EQ(ErrorCodeOf(Query("ALTER TABLE app.accounts DROP id")), static_cast<int32_t>(cql::ErrorCode::kInvalid));
  EXPECT_EQ(ErrorCodeOf(Query("DROP KEYSPACE system")), static_cast<int32_t>(cql::ErrorCode::kInvalid));
  EXPECT_EQ(cluster_.node(1).Schema().sequence, 0u);  // nothing was appended
}

TEST_F(CqlSimTest, ConcurrentCreatesOfOneTableLetOneWin) {
  SimCqlClient other(simulator_, cluster_, 2);
  other.Startup();
  // Both check against the same schema; Paxos on the log's next entry
  // lets one append, and the other, checking again, finds the table.
  client_.Submit(cql::Opcode::kQuery, QueryBody("CREATE TABLE app.t (id int PRIMARY KEY, a text)", CL_ONE));
  other.Submit(cql::Opcode::kQuery, QueryBody("CREATE TABLE app.t (id int PRIMARY KEY, b text)", CL_ONE));
  RunFor(2000 * kMillisecond);
  ASSERT_EQ(client_.answers().size(), 2u);  // STARTUP's READY, then the CREATE's
  ASSERT_EQ(other.answers().size(), 2u);
  const std::string first = client_.answers().back().substr(cql::kHeaderBytes);
  const std::string second = other.answers().back().substr(cql::kHeaderBytes);
  const bool first_won = SchemaChangeOf(first) == "CREATED TABLE app t";
  EXPECT_EQ(ErrorCodeOf(first_won ? second : first), static_cast<int32_t>(cql::ErrorCode::kAlreadyExists));
  const std::map<NodeId, std::string> versions = Versions();
  EXPECT_EQ(versions.at(2), versions.at(1));
  EXPECT_EQ(versions.at(3), versions.at(1));
  const cql::Table* table = cluster_.node(3).Schema().schema->FindTable("app", "t");
  ASSERT_NE(table, nullptr);
  EXPECT_NE(table->Find(first_won ? "a" : "b"), nullptr);
  EXPECT_EQ(cluster_.node(1).Schema().sequence, 1u);
}

TEST_F(CqlSimTest, ANodeThatWasDownCatchesUpWithTheLog) {
  cluster_.Crash(3);
  RunFor(2000 * kMillisecond);
  EXPECT_EQ(SchemaChangeOf(Query("CREATE TABLE app.late (id int PRIMARY KEY)")), "CREATED TABLE app late");
  // Node 1 restarts too: it reads the log back at start, from its peers.
  cluster_.Restart(3);
  cluster_.Crash(1);
  cluster_.Restart(1);
  RunFor(3000 * kMillisecond);
  const std::map<NodeId, std::string> versions = Versions();
  EXPECT_EQ(versions.at(3), versions.at(2));
  EXPECT_EQ(versions.at(1), versions.at(2));
  EXPECT_NE(cluster_.node(3).Schema().schema->FindTable("app", "late"), nullptr);
  EXPECT_NE(cluster_.node(1).Schema().schema->FindTable("app", "late"), nullptr);
}

TEST_F(CqlSimTest, SchemaChangesQueuedOnOneNodeAreAllAnswered) {
  // Two connections to node 1 ask at once: its agent runs them one after
  // the other, and must go on to the second once the first is done.
  SimCqlClient second(simulator_, cluster_, 1);
  second.Startup();
  client_.Submit(cql::Opcode::kQuery, QueryBody("CREATE TABLE app.first (id int PRIMARY KEY)", CL_QUORUM));
  second.Submit(cql::Opcode::kQuery, QueryBody("CREATE TABLE app.second (id int PRIMARY KEY)", CL_QUORUM));
  const size_t before = client_.answers().size();
  RunFor(3000 * kMillisecond);
  ASSERT_EQ(client_.answers().size(), before + 1);
  ASSERT_EQ(second.answers().size(), 2u);  // READY, then the change
  EXPECT_EQ(SchemaChangeOf(client_.answers().back().substr(cql::kHeaderBytes)), "CREATED TABLE app first");
  EXPECT_EQ(SchemaChangeOf(second.answers().back().substr(cql::kHeaderBytes)), "CREATED TABLE app second");
}

TEST_F(CqlSimTest, EveryNodeKnowsItsPeersSchemaVersions) {
  EXPECT_EQ(SchemaChangeOf(Query("CREATE TABLE app.known (id int PRIMARY KEY)")), "CREATED TABLE app known");
  RunFor(2000 * kMillisecond);  // heartbeats carry each node's version
  const std::string version = cluster_.node(1).Schema().version;
  for (NodeId node = 1; node <= 3; node++) {
    const SchemaSnapshot schema = cluster_.node(node).Schema();
    EXPECT_EQ(schema.version, version) << "node " << node;
    // What drivers read in system.peers to wait for schema agreement.
    for (NodeId peer = 1; peer <= 3; peer++) {
      if (peer == node) continue;
      ASSERT_TRUE(schema.peer_versions.count(peer)) << "node " << node << " peer " << peer;
      EXPECT_EQ(schema.peer_versions.at(peer), version) << "node " << node << " peer " << peer;
    }
  }
}

TEST_F(CqlSimTest, ASchemaChangeOutlivesARestartOfEveryNode) {
  EXPECT_EQ(SchemaChangeOf(Query("CREATE TABLE app.kept (id int PRIMARY KEY)")), "CREATED TABLE app kept");
  RunFor(1000 * kMillisecond);
  // Every node restarts at once: none can learn the log from a peer that
  // kept it in memory, so each must have kept its own copy.
  for (NodeId node = 1; node <= 3; node++) cluster_.Crash(node);
  for (NodeId node = 1; node <= 3; node++) cluster_.Restart(node);
  RunFor(3000 * kMillisecond);
  for (NodeId node = 1; node <= 3; node++) {
    EXPECT_NE(cluster_.node(node).Schema().schema->FindTable("app", "kept"), nullptr) << "node " << node;
    EXPECT_EQ(cluster_.node(node).Schema().sequence, 1u) << "node " << node;
  }
}

TEST_F(CqlSimTest, APreparedStatementOfAnAlteredTableIsPreparedAgain) {
  const std::string id = Prepare("SELECT * FROM app.accounts WHERE id = ?");
  ASSERT_FALSE(id.empty());
  const auto execute = [&] { return Execute(id, "a"); };
  EXPECT_EQ(cql::Reader(execute()).Int(), 2);  // Rows
  EXPECT_EQ(SchemaChangeOf(Query("ALTER TABLE app.accounts ADD note text")), "UPDATED TABLE app accounts");
  EXPECT_EQ(ErrorCodeOf(execute()), static_cast<int32_t>(cql::ErrorCode::kUnprepared));
  EXPECT_EQ(client_.Reached("cql.prepared_outdated_by_schema"), 1);
  EXPECT_EQ(client_.Reached("cql.unprepared"), 0);
}

// Dropped, or dropped and created again with the same columns (another
// table: its rows are stored apart), the statement is prepared again.
TEST_F(CqlSimTest, APreparedStatementOfATableDroppedOrMadeAgainIsPreparedAgain) {
  ASSERT_EQ(SchemaChangeOf(Query("CREATE TABLE app.notes (id text PRIMARY KEY, body text)")), "CREATED TABLE app notes");
  const std::string id = Prepare("SELECT * FROM app.notes WHERE id = ?");
  ASSERT_FALSE(id.empty());
  const auto execute = [&] { return Execute(id, "a"); };
  EXPECT_EQ(cql::Reader(execute()).Int(), 2);  // Rows
  ASSERT_EQ(SchemaChangeOf(Query("DROP TABLE app.notes")), "DROPPED TABLE app notes");
  EXPECT_EQ(ErrorCodeOf(execute()), static_cast<int32_t>(cql::ErrorCode::kUnprepared));
  ASSERT_EQ(SchemaChangeOf(Query("CREATE TABLE app.notes (id text PRIMARY KEY, body text)")), "CREATED TABLE app notes");
  EXPECT_EQ(ErrorCodeOf(execute()), static_cast<int32_t>(cql::ErrorCode::kUnprepared));
  EXPECT_EQ(client_.Reached("cql.prepared_outdated_by_schema"), 2);
  // Prepared again, as a driver does on Unprepared: it runs on the new table.
  ASSERT_EQ(Prepare("SELECT * FROM app.notes WHERE id = ?"), id);
  EXPECT_EQ(cql::Reader(execute()).Int(), 2);  // Rows
}

TEST_F(CqlSimTest, AColumnDroppedAndAddedAgainComesBackEmpty) {
  using RowsOf = std::vector<std::vector<std::string>>;
  const std::string one = cql::NativeInt(1), two = cql::NativeInt(2), five = cql::NativeInt(5);
  ASSERT_EQ(SchemaChangeOf(Query("CREATE KEYSPACE shop WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3}")),
            "CREATED KEYSPACE shop");
  ASSERT_EQ(SchemaChangeOf(Query("CREATE TABLE shop.rows (p int, c int, v int, x int, PRIMARY KEY (p, c))")),
            "CREATED TABLE shop rows");
  ASSERT_EQ(ErrorCodeOf(Query("INSERT INTO shop.rows (p, c, v, x) VALUES (1, 1, 1, 10)")), 0);
  // Rows 2 and 3 have only x: no row marker, no other cell.
  ASSERT_EQ(ErrorCodeOf(Query("UPDATE shop.rows SET x = 20 WHERE p = 1 AND c = 2")), 0);
  ASSERT_EQ(ErrorCodeOf(Query("UPDATE shop.rows SET x = 30 WHERE p = 1 AND c = 3")), 0);
  ASSERT_EQ(Rows(Query("SELECT c FROM shop.rows WHERE p = 1")).size(), 3u);

  // Dropped: the rows that only x kept alive are gone, for reads, scans,
  // serial reads and conditions alike.
  ASSERT_EQ(SchemaChangeOf(Query("ALTER TABLE shop.rows DROP x")), "UPDATED TABLE shop rows");
  EXPECT_EQ(Rows(Query("SELECT c, v FROM shop.rows WHERE p = 1")), (RowsOf{{one, one}}));
  EXPECT_EQ(Rows(Query("SELECT c FROM shop.rows")), (RowsOf{{one}}));
  EXPECT_TRUE(Rows(Query("SELECT c FROM shop.rows WHERE p = 1 AND c = 3", CL_SERIAL)).empty());
  EXPECT_EQ(Rows(Query("UPDATE shop.rows SET v = 7 WHERE p = 1 AND c = 3 IF EXISTS")), (RowsOf{{cql::NativeBoolean(false)}}));
  EXPECT_EQ(Rows(Query("INSERT INTO shop.rows (p, c, v) VALUES (1, 2, 5) IF NOT EXISTS")), (RowsOf{{cql::NativeBoolean(true)}}));

  // Added again: stored afresh, so none of its old values come back.
  ASSERT_EQ(SchemaChangeOf(Query("ALTER TABLE shop.rows ADD x int")), "UPDATED TABLE shop rows");
  EXPECT_EQ(Rows(Query("SELECT c, v, x FROM shop.rows WHERE p = 1")), (RowsOf{{one, one, ""}, {two, five, ""}}));
  EXPECT_EQ(Rows(Query("SELECT x FROM shop.rows WHERE p = 1 AND c = 1", CL_SERIAL)), (RowsOf{{""}}));
  EXPECT_EQ(Rows(Query("UPDATE shop.rows SET v = 7 WHERE p = 1 AND c = 2 IF x = 20")).at(0).at(0), cql::NativeBoolean(false));
  ASSERT_EQ(ErrorCodeOf(Query("UPDATE shop.rows SET x = 40 WHERE p = 1 AND c = 2")), 0);
  EXPECT_EQ(Rows(Query("UPDATE shop.rows SET v = 7 WHERE p = 1 AND c = 2 IF x = 40")), (RowsOf{{cql::NativeBoolean(true)}}));
  EXPECT_EQ(Rows(Query("SELECT c, v, x FROM shop.rows")), (RowsOf{{one, one, ""}, {two, cql::NativeInt(7), cql::NativeInt(40)}}));
  // The column's type may change with its life, as no old value is read.
  ASSERT_EQ(SchemaChangeOf(Query("ALTER TABLE shop.rows DROP x")), "UPDATED TABLE shop rows");
  ASSERT_EQ(SchemaChangeOf(Query("ALTER TABLE shop.rows ADD x text")), "UPDATED TABLE shop rows");
  EXPECT_EQ(Rows(Query("SELECT x FROM shop.rows WHERE p = 1")), (RowsOf{{""}, {""}}));
}

// DELETE of a clustering range and of a whole partition (range tombstones)
// on a table in DESC order: the rows go for reads, pages, scans, serial
// reads and conditions; a replica that missed the delete is outvoted and
// repaired; rows written after it, or deleted with an older timestamp,
// stay. A range DELETE of columns, with IF, or with IN is refused.
TEST_F(CqlSimTest, ARangeOrPartitionDeleteDeletesItsRows) {
  using RowsOf = std::vector<std::vector<std::string>>;
  const auto seqs = [](std::vector<int> values) {
    RowsOf rows;
    for (int value : values) rows.push_back({cql::NativeInt(value)});
    return rows;
  };
  for (int seq = 1; seq <= 6; seq++) {
    ASSERT_EQ(ErrorCodeOf(Query(absl::StrCat("INSERT INTO app.events (stream, seq, note) VALUES ('r', ", seq, ", 'n')"))), 0);
  }
  cluster_.Crash(3);
  RunFor(2000 * kMillisecond);
  ASSERT_EQ(ErrorCodeOf(Query("DELETE FROM app.events WHERE stream = 'r' AND seq >= 2 AND seq < 5")), 0);
  cluster_.Restart(3);
  RunFor(3000 * kMillisecond);
  EXPECT_EQ(Rows(Query("SELECT seq FROM app.events WHERE stream = 'r'", CL_ALL)), seqs({6, 5, 1}));
  EXPECT_EQ(Rows(Query("SELECT seq FROM app.events WHERE stream = 'r' AND seq < 6", CL_ALL)), seqs({5, 1}));
  EXPECT_EQ(Rows(Query("SELECT seq FROM app.events WHERE stream = 'r' AND seq = 3", CL_SERIAL)), RowsOf{});
  EXPECT_EQ(Rows(Query("UPDATE app.events SET note = 'x' WHERE stream = 'r' AND seq = 3 IF EXISTS")),
            (RowsOf{{cql::NativeBoolean(false)}}));
  int pages = 0;
  EXPECT_EQ(AllPages("SELECT seq FROM app.events WHERE stream = 'r'", 1, &pages), seqs({6, 5, 1}));
  // Read repair gave node 3 the deletion: with the others down, it serves it.
  cluster_.Crash(1);
  cluster_.Crash(2);
  RunFor(2000 * kMillisecond);
  SimCqlClient third(simulator_, cluster_, 3);
  third.Startup();
  EXPECT_EQ(Rows(third.Query("SELECT seq FROM app.events WHERE stream = 'r'", CL_ONE)), seqs({6, 5, 1}));
  cluster_.Restart(1);
  cluster_.Restart(2);
  RunFor(3000 * kMillisecond);

  // A delete stamped before the rows deletes none of them.
  ASSERT_EQ(ErrorCodeOf(Query("DELETE FROM app.events USING TIMESTAMP 1 WHERE stream = 'r' AND seq > 4")), 0);
  EXPECT_EQ(Rows(Query("SELECT seq FROM app.events WHERE stream = 'r'")), seqs({6, 5, 1}));
  // An empty range deletes nothing, and reads nothing.
  ASSERT_EQ(ErrorCodeOf(Query("DELETE FROM app.events WHERE stream = 'r' AND seq > 5 AND seq < 2")), 0);
  EXPECT_EQ(Rows(Query("SELECT seq FROM app.events WHERE stream = 'r'")), seqs({6, 5, 1}));
  EXPECT_EQ(Rows(Query("SELECT seq FROM app.events WHERE stream = 'r' AND seq > 5 AND seq < 2", CL_ALL)), RowsOf{});
  EXPECT_EQ(Rows(Query("SELECT seq FROM app.events WHERE stream = 'r' AND seq > 5 AND seq < 2", CL_SERIAL)), RowsOf{});
  // The whole partition, then a row written after it.
  ASSERT_EQ(ErrorCodeOf(Query("DELETE FROM app.events WHERE stream = 'r'")), 0);
  EXPECT_EQ(Rows(Query("SELECT seq FROM app.events WHERE stream = 'r'")), RowsOf{});
  EXPECT_EQ(Rows(Query("SELECT COUNT(*) FROM app.events WHERE stream = 'r'")), (RowsOf{{cql::NativeBigint(0)}}));
  EXPECT_EQ(Rows(Query("SELECT seq FROM app.events")), RowsOf{});
  ASSERT_EQ(ErrorCodeOf(Query("INSERT INTO app.events (stream, seq, note) VALUES ('r', 3, 'again')")), 0);
  EXPECT_EQ(Rows(Query("SELECT seq FROM app.events WHERE stream = 'r'", CL_ALL)), seqs({3}));
  EXPECT_EQ(Rows(Query("SELECT seq FROM app.events")), seqs({3}));

  EXPECT_EQ(ErrorOf(Query("DELETE note FROM app.events WHERE stream = 'r' AND seq > 1")),
            "8704: Range deletions are not supported for specific columns");
  EXPECT_EQ(ErrorOf(Query("DELETE FROM app.events WHERE stream = 'r' IF EXISTS")),
            "8704: DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to use "
            "IF conditions");
  EXPECT_EQ(ErrorCodeOf(Query("DELETE FROM app.events WHERE stream = 'r' AND seq IN (1, 2)")),
            static_cast<int32_t>(cql::ErrorCode::kInvalid));
  EXPECT_EQ(ErrorCodeOf(Query("DELETE FROM app.events WHERE seq > 1")), static_cast<int32_t>(cql::ErrorCode::kInvalid));
}

// WRITETIME() and TTL() selectors: when each cell was written (the
// client's USING TIMESTAMP, or the coordinator's) and how long it has
// left; null for a cell not there, and TTL null for one that does not
// expire. A key column has neither.
TEST_F(CqlSimTest, WritetimeAndTtlSayWhenACellWasWrittenAndHowLongItHasLeft) {
  using RowsOf = std::vector<std::vector<std::string>>;
  ASSERT_EQ(ErrorCodeOf(Query("INSERT INTO app.accounts (id, balance) VALUES ('w', 5) USING TIMESTAMP 1234 AND TTL 100")), 0);
  ASSERT_EQ(ErrorCodeOf(Query("UPDATE app.accounts USING TIMESTAMP 2000 SET owner = 'ann' WHERE id = 'w'")), 0);
  RunFor(1500 * kMillisecond);
  EXPECT_EQ(Rows(Query("SELECT WRITETIME(balance), TTL(balance), writetime(owner), ttl(owner) FROM app.accounts WHERE id = 'w'")),
            (RowsOf{{cql::NativeBigint(1234), cql::NativeInt(99), cql::NativeBigint(2000), ""}}));
  EXPECT_EQ(Rows(Query("SELECT WRITETIME(balance) FROM app.accounts WHERE id = 'w'", CL_SERIAL)),
            (RowsOf{{cql::NativeBigint(1234)}}));
  EXPECT_EQ(Rows(Query("SELECT id, TTL(balance) FROM app.accounts")), (RowsOf{{"w", cql::NativeInt(99)}}));
  ASSERT_EQ(ErrorCodeOf(Query("UPDATE app.accounts SET balance = null WHERE id = 'w'")), 0);
  const RowsOf cleared = Rows(Query("SELECT WRITETIME(balance), TTL(balance) FROM app.accounts WHERE id = 'w'"));
  EXPECT_EQ(cleared, (RowsOf{{"", ""}}));
  EXPECT_EQ(ErrorOf(Query("SELECT WRITETIME(id) FROM app.accounts WHERE id = 'w'")),
            "8704: Cannot use selection function writeTime on PRIMARY KEY part id");
  EXPECT_EQ(ErrorOf(Query("SELECT TTL(seq) FROM app.events WHERE stream = 'w'")),
            "8704: Cannot use selection function ttl on PRIMARY KEY part seq");
}

TEST_F(CqlSimTest, AggregatesSumUpTheRowsOfNamedPartitions) {
  using RowsOf = std::vector<std::vector<std::string>>;
  for (int seq : {4, -2, 7}) {
    ASSERT_EQ(ErrorCodeOf(Query(absl::StrCat("INSERT INTO app.events (stream, seq, note) VALUES ('agg', ", seq, ", 'n", seq, "')"))), 0);
  }
  ASSERT_EQ(ErrorCodeOf(Query("INSERT INTO app.events (stream, seq) VALUES ('agg', 1)")), 0);  // a null note
  EXPECT_EQ(Rows(Query("SELECT min(seq), max(seq), sum(seq), avg(seq), count(note), count(seq) FROM app.events WHERE stream = 'agg'")),
            (RowsOf{{cql::NativeInt(-2), cql::NativeInt(7), cql::NativeInt(10), cql::NativeInt(2), cql::NativeBigint(3),
                     cql::NativeBigint(4)}}));
  // Within the slice and LIMIT (seq DESC: rows 7 and 4); the other columns
  // as the first row holds them.
  EXPECT_EQ(Rows(Query("SELECT stream, max(note) AS top, sum(seq) FROM app.events WHERE stream = 'agg' AND seq > 0 LIMIT 2")),
            (RowsOf{{"agg", "n7", cql::NativeInt(11)}}));
  // Over no row: one row all the same.
  EXPECT_EQ(Rows(Query("SELECT min(seq), sum(seq), count(seq) FROM app.events WHERE stream = 'none'")),
            (RowsOf{{"", cql::NativeInt(0), cql::NativeBigint(0)}}));
  // count(*) beside other selectors, or named by AS.
  EXPECT_EQ(Rows(Query("SELECT count(*), max(seq) FROM app.events WHERE stream = 'agg'")),
            (RowsOf{{cql::NativeBigint(4), cql::NativeInt(7)}}));
  EXPECT_EQ(Rows(Query("SELECT COUNT(1) AS n FROM app.events WHERE stream = 'agg' AND seq > 0")),
            (RowsOf{{cql::NativeBigint(3)}}));
  // Paging asked for: the aggregate still reads every row.
  int pages = 0;
  EXPECT_EQ(AllPages("SELECT count(seq), max(seq) FROM app.events WHERE stream = 'agg'", 1, &pages),
            (RowsOf{{cql::NativeBigint(4), cql::NativeInt(7)}}));
  EXPECT_EQ(pages, 1);
  // token() of the partition, as the ring places it.
  EXPECT_EQ(Rows(Query("SELECT token(stream), seq FROM app.events WHERE stream = 'agg' AND seq = 7")),
            (RowsOf{{cql::NativeBigint(TokenOf("agg")), cql::NativeInt(7)}}));
  EXPECT_EQ(ErrorOf(Query("SELECT sum(note) FROM app.events WHERE stream = 'agg'")),
            "8704: Invalid call to function sum, none of its type signatures match (argument note is of type text)");
  EXPECT_EQ(ErrorOf(Query("SELECT max(seq) FROM app.events")),
            "8704: aggregates are supported over the rows of named partitions (a WHERE on the partition key), not over a scan yet");
  EXPECT_EQ(ErrorOf(Query("SELECT token(seq) FROM app.events")), "8704: token() takes the partition key's columns, in order");
}

// now(), uuid() and the current*() functions read the coordinating node's
// clock and random bits (in a simulation, its simulated clock and a seeded
// stream).
TEST_F(CqlSimTest, FunctionsInTermsReadTheNodesClock) {
  ASSERT_EQ(SchemaChangeOf(Query("CREATE TABLE app.stamps (id int PRIMARY KEY, t timeuuid, u uuid, at timestamp, d date, ms bigint)")),
            "CREATED TABLE app stamps");
  RunFor(1000 * kMillisecond);
  const int64_t before_us = cluster_.node(1).clock().Local(simulator_.now()) / kMicrosecond;
  ASSERT_EQ(ErrorOf(Query("INSERT INTO app.stamps (id, t, u, at, d, ms) VALUES "
                          "(1, now(), uuid(), currentTimestamp(), currentDate(), toUnixTimestamp(now()))")),
            "result kind 1");
  ASSERT_EQ(ErrorOf(Query("INSERT INTO app.stamps (id, t, u) VALUES (2, now(), uuid())")), "result kind 1");
  const auto rows = Rows(Query("SELECT t, u, at, d, ms FROM app.stamps WHERE id IN (1, 2)"));
  ASSERT_EQ(rows.size(), 2u);
  const std::string& t = rows[0][0];
  ASSERT_EQ(t.size(), 16u);
  EXPECT_EQ(static_cast<uint8_t>(t[6]) >> 4, 1);  // version 1
  EXPECT_EQ(static_cast<uint8_t>(rows[0][1][6]) >> 4, 4);  // uuid(): version 4
  const int64_t t_us = cql::MicrosOfTimeUuid(t);
  EXPECT_GE(t_us, before_us);
  EXPECT_LT(t_us, before_us + 1'000'000);
  const auto millis = [](const std::string& native) { return static_cast<int64_t>(ReadBigEndian(native, 8)); };
  EXPECT_LE(std::abs(millis(rows[0][2]) - t_us / 1000), 1);  // currentTimestamp()
  EXPECT_LE(std::abs(millis(rows[0][4]) - t_us / 1000), 1);  // toUnixTimestamp(now())
  EXPECT_EQ(rows[0][3], cql::NativeInt(static_cast<int32_t>((t_us / 86'400'000'000) - (int64_t{1} << 31))));
  EXPECT_NE(rows[1][0], t);  // each now() its own
  EXPECT_NE(rows[1][1], rows[0][1]);
  EXPECT_EQ(ErrorOf(Query("INSERT INTO app.stamps (id, ms) VALUES (3, now())")),
            "8704: Type error: cannot assign result of function system.now (type timeuuid) to a value of type bigint");
  EXPECT_EQ(ErrorOf(Query("INSERT INTO app.stamps (id, u) VALUES (3, nope())")), "8704: Unknown function nope called");
  EXPECT_EQ(ErrorOf(Query("INSERT INTO app.stamps (id, u) VALUES (3, uuid(1))")),
            "8704: Invalid number of arguments in call to function uuid: 0 required but 1 provided");
}

}  // namespace
}  // namespace charybdis::sim
