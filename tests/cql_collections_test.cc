// Collections through CQL (docs/cql.md, "Collections"): sets, maps and
// lists, frozen and not, from simulated clients against a simulated
// 3-node cluster. A non-frozen collection is a cell per element, so
// concurrent additions both win and a collection set whole replaces what
// was written before it only.

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "core/cql/consistency_code.h"
#include "core/cql/types.h"
#include "sim/cluster.h"
#include "sim/cql_frames.h"
#include "tests/cql_sim_fixture.h"

namespace charybdis::sim {
namespace {

using cql::NativeCollection;
using cql::NativeInt;
using cql::NativeMap;

constexpr char kSchema[] = R"pb(schema {
  cql: "CREATE KEYSPACE app WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3}"
  cql: "CREATE TABLE app.profiles (id int PRIMARY KEY, tags set<text>, attrs map<text, int>, scores list<int>, labels frozen<set<text>>, runs map<text, frozen<list<int>>>)"
})pb";

class CqlCollectionsTest : public CqlSimFixture {
 protected:
  CqlCollectionsTest() : CqlSimFixture(kSchema) {}

  // Runs a statement that must succeed.
  void Run(const std::string& text) {
    const std::string answer = Query(text);
    EXPECT_EQ(ErrorCodeOf(answer), 0) << text << ": " << ErrorOf(answer);
  }

  std::string One(const std::string& column, int id = 1) {
    const RowsOf rows = Rows(Query(absl::StrCat("SELECT ", column, " FROM app.profiles WHERE id = ", id)));
    EXPECT_EQ(rows.size(), 1u) << column;
    return rows.empty() ? "<no row>" : rows[0][0];
  }
};

std::vector<std::string> Ints(std::initializer_list<int32_t> values) {
  std::vector<std::string> out;
  for (int32_t value : values) out.push_back(NativeInt(value));
  return out;
}

TEST_F(CqlCollectionsTest, SetsAndMapsGainAndLoseElements) {
  Run("INSERT INTO app.profiles (id, tags, attrs) VALUES (1, {'b', 'a', 'b'}, {'x': 1, 'y': 2})");
  EXPECT_EQ(One("tags"), NativeCollection({"a", "b"}));  // in order, once each
  EXPECT_EQ(One("attrs"), NativeMap({{"x", NativeInt(1)}, {"y", NativeInt(2)}}));

  Run("UPDATE app.profiles SET tags = tags + {'c'}, attrs['z'] = 3, attrs['x'] = 10 WHERE id = 1");
  Run("UPDATE app.profiles SET tags = tags - {'a', 'nope'}, attrs = attrs - {'y'} WHERE id = 1");
  EXPECT_EQ(One("tags"), NativeCollection({"b", "c"}));
  EXPECT_EQ(One("attrs"), NativeMap({{"x", NativeInt(10)}, {"z", NativeInt(3)}}));

  Run("DELETE attrs['x'] FROM app.profiles WHERE id = 1");
  Run("UPDATE app.profiles SET attrs['z'] = null WHERE id = 1");
  EXPECT_EQ(One("attrs"), "");  // empty is null
  Run("DELETE tags FROM app.profiles WHERE id = 1");
  EXPECT_EQ(One("tags"), "");

  // A row that only an UPDATE of elements wrote exists, as in Cassandra.
  Run("UPDATE app.profiles SET tags = tags + {'only'} WHERE id = 2");
  EXPECT_EQ(One("tags", 2), NativeCollection({"only"}));
  Run("UPDATE app.profiles SET tags = {} WHERE id = 2");
  EXPECT_TRUE(Rows(Query("SELECT tags FROM app.profiles WHERE id = 2")).empty());
}

TEST_F(CqlCollectionsTest, ACollectionSetWholeReplacesOnlyWhatCameBefore) {
  Run("UPDATE app.profiles USING TIMESTAMP 100 SET tags = tags + {'old'} WHERE id = 1");
  Run("UPDATE app.profiles USING TIMESTAMP 300 SET tags = tags + {'later'} WHERE id = 1");
  // Its tombstone is at 199: 'old' goes, 'later' stays, its own elements live.
  Run("UPDATE app.profiles USING TIMESTAMP 200 SET tags = {'new'} WHERE id = 1");
  EXPECT_EQ(One("tags"), NativeCollection({"later", "new"}));
  // A deletion at the same time as an addition wins the tie; the row,
  // which only elements kept, is gone with them.
  Run("DELETE tags FROM app.profiles USING TIMESTAMP 300 WHERE id = 1");
  EXPECT_TRUE(Rows(Query("SELECT tags FROM app.profiles WHERE id = 1")).empty());
}

TEST_F(CqlCollectionsTest, ListsKeepTheirOrderAndEveryAppend) {
  Run("INSERT INTO app.profiles (id, scores) VALUES (1, [3, 1])");
  Run("UPDATE app.profiles SET scores = scores + [5, 5] WHERE id = 1");
  Run("UPDATE app.profiles SET scores = [0, 9] + scores WHERE id = 1");
  EXPECT_EQ(One("scores"), NativeCollection(Ints({0, 9, 3, 1, 5, 5})));

  // Two coordinators append at the same client timestamp: both elements
  // stay (each names its own cells; ScyllaDB #7611 lost one).
  SimCqlClient other(simulator_, cluster_, 2);
  other.Startup();
  Run("UPDATE app.profiles USING TIMESTAMP 5000 SET scores = [7] WHERE id = 2");
  const std::string append = "UPDATE app.profiles USING TIMESTAMP 6000 SET scores = scores + [8] WHERE id = 2";
  client_.Submit(cql::Opcode::kQuery, QueryBody(append, CL_QUORUM));
  EXPECT_EQ(ErrorCodeOf(other.Query(append, CL_QUORUM)), 0);
  RunFor(500 * kMillisecond);
  EXPECT_EQ(One("scores", 2), NativeCollection(Ints({7, 8, 8})));

  Run("UPDATE app.profiles SET scores = [4] WHERE id = 1");
  EXPECT_EQ(One("scores"), NativeCollection(Ints({4})));
}

TEST_F(CqlCollectionsTest, ConcurrentAdditionsFromTwoClientsBothWin) {
  SimCqlClient other(simulator_, cluster_, 3);
  other.Startup();
  for (int i = 0; i < 20; i++) {
    client_.Submit(cql::Opcode::kQuery, QueryBody(absl::StrCat("UPDATE app.profiles SET tags = tags + {'a", i, "'}, attrs['a", i, "'] = ", i, " WHERE id = 1"), CL_ONE));
    other.Submit(cql::Opcode::kQuery, QueryBody(absl::StrCat("UPDATE app.profiles SET tags = tags + {'b", i, "'}, attrs['b", i, "'] = ", i, " WHERE id = 1"), CL_ONE));
  }
  RunFor(2000 * kMillisecond);
  std::optional<std::vector<std::string>> tags = cql::SplitCollection(One("tags"));
  ASSERT_TRUE(tags.has_value());
  EXPECT_EQ(tags->size(), 40u);
  std::optional<std::vector<std::pair<std::string, std::string>>> attrs = cql::SplitMap(One("attrs"));
  ASSERT_TRUE(attrs.has_value());
  EXPECT_EQ(attrs->size(), 40u);
}

TEST_F(CqlCollectionsTest, ElementsExpireOneByOne) {
  Run("UPDATE app.profiles SET tags = tags + {'stays'} WHERE id = 1");
  Run("UPDATE app.profiles USING TTL 1 SET tags = tags + {'goes'}, attrs['goes'] = 1 WHERE id = 1");
  EXPECT_EQ(One("tags"), NativeCollection({"goes", "stays"}));
  RunFor(1500 * kMillisecond);
  EXPECT_EQ(One("tags"), NativeCollection({"stays"}));
  EXPECT_EQ(One("attrs"), "");
}

TEST_F(CqlCollectionsTest, FrozenCollectionsAreOneValue) {
  Run("INSERT INTO app.profiles (id, labels, runs) VALUES (1, {'b', 'a'}, {'r': [2, 1]})");
  EXPECT_EQ(One("labels"), NativeCollection({"a", "b"}));
  EXPECT_EQ(One("runs"), NativeMap({{"r", NativeCollection(Ints({2, 1}))}}));
  // Equal values compare equal, however written.
  EXPECT_EQ(Rows(Query("UPDATE app.profiles SET labels = {'c'} WHERE id = 1 IF labels = {'a', 'b', 'a'}"))[0][0],
            cql::NativeBoolean(true));
  EXPECT_EQ(One("labels"), NativeCollection({"c"}));
  Run("UPDATE app.profiles SET runs['s'] = [] WHERE id = 1");
  EXPECT_EQ(One("runs"), NativeMap({{"r", NativeCollection(Ints({2, 1}))}, {"s", NativeCollection({})}}));
}

TEST_F(CqlCollectionsTest, BoundCollectionsAndConditionalWrites) {
  cql::Writer prepare;
  prepare.LongString("UPDATE app.profiles SET tags = tags + ?, attrs[?] = ? WHERE id = 1");
  const std::string answer = client_.Send(cql::Opcode::kPrepare, prepare.Take());
  cql::Reader prepared(answer);
  ASSERT_EQ(prepared.Int(), 4);
  const std::string id = prepared.ShortBytes();
  cql::Writer body;
  body.ShortBytes(id);
  body.Short(cql::ToCqlConsistency(CL_QUORUM));
  body.Byte(0x01);
  body.Short(3);
  body.Bytes(NativeCollection({"x", "y"}));
  body.Bytes(std::string("k"));
  body.Bytes(NativeInt(7));
  EXPECT_EQ(ErrorCodeOf(client_.Send(cql::Opcode::kExecute, body.Take())), 0);
  EXPECT_EQ(One("tags"), NativeCollection({"x", "y"}));
  EXPECT_EQ(One("attrs"), NativeMap({{"k", NativeInt(7)}}));

  // An LWT writes collections as a plain write does.
  EXPECT_EQ(Rows(Query("INSERT INTO app.profiles (id, tags, scores) VALUES (3, {'p'}, [1, 2]) IF NOT EXISTS"))[0][0],
            cql::NativeBoolean(true));
  EXPECT_EQ(Rows(Query("UPDATE app.profiles SET tags = {'q'}, scores = scores + [3] WHERE id = 3 IF EXISTS"))[0][0],
            cql::NativeBoolean(true));
  EXPECT_EQ(One("tags", 3), NativeCollection({"q"}));
  EXPECT_EQ(One("scores", 3), NativeCollection(Ints({1, 2, 3})));
}

TEST_F(CqlCollectionsTest, ConditionsCompareAWholeCollectionOrAMapEntry) {
  const auto applied = [&](const std::string& text) {
    const RowsOf rows = Rows(Query(text));
    return !rows.empty() && rows[0][0] == cql::NativeBoolean(true);
  };
  Run("INSERT INTO app.profiles (id, tags, attrs, scores) VALUES (1, {'b', 'a'}, {'x': 1, 'y': 2}, [3, 1, 3])");
  // A whole set, map or list, as a client writes it (in any order for a set).
  EXPECT_TRUE(applied("UPDATE app.profiles SET attrs['z'] = 0 WHERE id = 1 IF tags = {'a', 'b'}"));
  EXPECT_FALSE(applied("UPDATE app.profiles SET attrs['z'] = 0 WHERE id = 1 IF tags = {'a'}"));
  EXPECT_TRUE(applied("UPDATE app.profiles SET attrs['z'] = 0 WHERE id = 1 IF tags != {'a'} AND scores = [3, 1, 3]"));
  EXPECT_FALSE(applied("UPDATE app.profiles SET attrs['z'] = 0 WHERE id = 1 IF scores = [1, 3, 3]"));
  EXPECT_TRUE(applied("UPDATE app.profiles SET attrs['w'] = 9 WHERE id = 1 IF attrs = {'x': 1, 'y': 2, 'z': 0}"));
  // One entry of a map, with any comparison its values allow.
  EXPECT_TRUE(applied("UPDATE app.profiles SET tags = tags + {'c'} WHERE id = 1 IF attrs['w'] = 9 AND attrs['x'] < 2"));
  EXPECT_FALSE(applied("UPDATE app.profiles SET tags = tags + {'d'} WHERE id = 1 IF attrs['x'] > 1"));
  EXPECT_FALSE(applied("UPDATE app.profiles SET tags = tags + {'d'} WHERE id = 1 IF attrs['none'] = 1"));
  EXPECT_TRUE(applied("UPDATE app.profiles SET tags = tags + {'e'} WHERE id = 1 IF attrs['none'] != 1"));
  EXPECT_EQ(One("tags"), NativeCollection({"a", "b", "c", "e"}));
  // Elements a set written whole dropped are gone for conditions too.
  Run("UPDATE app.profiles SET tags = {'n'} WHERE id = 1");
  EXPECT_TRUE(applied("UPDATE app.profiles SET scores = [] WHERE id = 1 IF tags = {'n'}"));
  EXPECT_TRUE(applied("UPDATE app.profiles SET attrs = {} WHERE id = 1 IF scores = []"));
  EXPECT_EQ(ErrorOf(Query("UPDATE app.profiles SET attrs = {} WHERE id = 1 IF tags > {'a'}")),
            "8704: a set<text> column can only be compared with = and !=");
  EXPECT_EQ(ErrorOf(Query("UPDATE app.profiles SET attrs = {} WHERE id = 1 IF scores[0] = 1")),
            "8704: conditions on an element of scores are supported on non-frozen maps only (a list's index needs a read)");
}

TEST_F(CqlCollectionsTest, WhatIsNotACollectionOperationIsRefused) {
  EXPECT_EQ(ErrorOf(Query("UPDATE app.profiles SET tags['a'] = 'b' WHERE id = 1")),
            "8704: Invalid operation (tags[?] = ?) for set column tags");
  EXPECT_EQ(ErrorOf(Query("UPDATE app.profiles SET labels = labels + {'a'} WHERE id = 1")),
            "8704: Invalid operation (labels = labels + ?) for non collection column labels");
  EXPECT_EQ(ErrorOf(Query("UPDATE app.profiles SET tags = {'a'} + tags WHERE id = 1")),
            "8704: Invalid operation (tags = ? + tags) for non list column tags");
  EXPECT_EQ(ErrorOf(Query("SELECT WRITETIME(tags) FROM app.profiles WHERE id = 1")),
            "8704: Cannot use selection function writeTime on non-frozen collection tags");
  EXPECT_EQ(ErrorOf(Query("INSERT INTO app.profiles (id, tags) VALUES (1, ['a'])")),
            "8704: Invalid list literal for a value of type set<text>");
  EXPECT_EQ(ErrorOf(Query("INSERT INTO app.profiles (id, tags) VALUES (1, {'a', null})")),
            "8704: null is not supported inside collections");
  EXPECT_NE(ErrorCodeOf(Query("CREATE TABLE app.bad (id int PRIMARY KEY, s set<list<int>>)")), 0);
  EXPECT_NE(ErrorCodeOf(Query("CREATE TABLE app.bad (id int PRIMARY KEY, s frozen<int>)")), 0);
  EXPECT_NE(ErrorCodeOf(Query("CREATE TABLE app.bad (id set<int> PRIMARY KEY, v int)")), 0);
}

}  // namespace
}  // namespace charybdis::sim
