// CQL's language and values in core/cql: the parser, the types' encodings
// and the key layout that makes byte order CQL order.

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/schema/bootstrap.h"
#include "core/cql/lexer.h"
#include "core/cql/literal.h"
#include "core/cql/parser.h"
#include "core/cql/schema.h"
#include "core/cql/schema_change.h"
#include "core/schema/schema_log.h"
#include "core/cql/system_tables.h"

namespace charybdis::cql {
namespace {

ParsedStatement ParseOk(std::string_view text) {
  absl::StatusOr<ParsedStatement> parsed = Parse(text);
  EXPECT_TRUE(parsed.ok()) << text << ": " << parsed.status();
  return parsed.ok() ? *parsed : ParsedStatement{};
}

Schema MakeSchema(const std::vector<std::string>& statements) {
  Schema schema;
  for (const std::string& text : statements) {
    ParsedStatement parsed = ParseOk(text);
    absl::Status applied = std::holds_alternative<CreateKeyspace>(parsed.statement)
                               ? schema.Apply(std::get<CreateKeyspace>(parsed.statement))
                               : schema.Apply(std::get<CreateTable>(parsed.statement));
    EXPECT_TRUE(applied.ok()) << text << ": " << applied;
  }
  return schema;
}

std::string Native(const Type& type, Term::Kind kind, const std::string& text) {
  absl::StatusOr<std::optional<std::string>> value = LiteralValue(type, Term{kind, text, -1, {}});
  EXPECT_TRUE(value.ok()) << text << ": " << value.status();
  return value.ok() && *value ? **value : "";
}

TEST(CqlParser, ReadsTheStatementsDriversSend) {
  ParsedStatement select = ParseOk("SELECT * FROM system.local WHERE key='local'");
  const Select& s = std::get<Select>(select.statement);
  EXPECT_EQ(s.table.keyspace, "system");
  EXPECT_EQ(s.table.table, "local");
  ASSERT_EQ(s.where.size(), 1u);
  EXPECT_EQ(s.where[0].terms[0].text, "local");

  ParsedStatement insert = ParseOk("INSERT INTO app.t (a, b) VALUES (?, :bee) IF NOT EXISTS USING TTL 10;");
  const Insert& i = std::get<Insert>(insert.statement);
  EXPECT_TRUE(i.if_.not_exists);
  EXPECT_EQ(i.using_.ttl_seconds->text, "10");
  EXPECT_EQ(insert.markers, (std::vector<std::string>{"", "bee"}));

  ParsedStatement update = ParseOk("UPDATE t SET v = 'it''s' WHERE k = 1 AND c >= -2 IF v != 3 AND w <= 4.5e1");
  const Update& u = std::get<Update>(update.statement);
  EXPECT_EQ(u.set[0].value.text, "it's");
  EXPECT_EQ(u.where[1].op, Operator::kGe);
  EXPECT_EQ(u.where[1].terms[0].text, "-2");
  EXPECT_EQ(u.if_.conditions[1].op, Operator::kLe);
  EXPECT_EQ(u.if_.conditions[1].value.kind, Term::Kind::kFloat);

  ParsedStatement batch = ParseOk("BEGIN UNLOGGED BATCH INSERT INTO t (k) VALUES (1); DELETE v FROM t WHERE k = 2 APPLY BATCH");
  const Batch& b = std::get<Batch>(batch.statement);
  EXPECT_FALSE(b.logged);
  EXPECT_EQ(b.statements.size(), 2u);

  ParsedStatement order = ParseOk("select count(*) from t where k in (1, 2) and c > 0x00ff order by c desc limit 5");
  EXPECT_TRUE(std::get<Select>(order.statement).count);
  EXPECT_EQ(std::get<Select>(order.statement).where[0].terms.size(), 2u);
  EXPECT_EQ(std::get<Select>(order.statement).where[1].terms[0].kind, Term::Kind::kHex);
  EXPECT_TRUE(std::get<Select>(order.statement).order_by->second);

  // A column may be called ttl or writetime; called, they are functions.
  ParsedStatement when = ParseOk("SELECT v, WRITETIME(v), ttl (w), ttl FROM t");
  const std::vector<Selector>& columns = std::get<Select>(when.statement).columns;
  ASSERT_EQ(columns.size(), 4u);
  EXPECT_EQ(columns[0].function, Selector::Function::kNone);
  EXPECT_EQ(columns[1].function, Selector::Function::kWritetime);
  EXPECT_EQ(columns[1].column, "v");
  EXPECT_EQ(columns[2].function, Selector::Function::kTtl);
  EXPECT_EQ(columns[2].column, "w");
  EXPECT_EQ(columns[3].function, Selector::Function::kNone);
  EXPECT_EQ(columns[3].column, "ttl");
}

TEST(CqlParser, SaysWhereASyntaxErrorIs) {
  absl::StatusOr<ParsedStatement> parsed = Parse("SELECT * FORM t");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(), "line 1:9 mismatched input 'form' expecting FROM");
  parsed = Parse("SELECT * FROM t WHERE k = 1\n  AND");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(), "line 2:5 mismatched input '<EOF>' expecting an identifier");
  EXPECT_FALSE(Parse("INSERT INTO t (a, b) VALUES (1)").ok());
  EXPECT_FALSE(Parse("SELECT * FROM t WHERE a = 'open").ok());
  EXPECT_FALSE(Parse("DROP EVERYTHING").ok());
}

TEST(CqlParser, SplitsScriptsAtSemicolonsOutsideQuotes) {
  absl::StatusOr<std::vector<std::string>> statements =
      SplitStatements("-- a comment; still\nUSE ks;\nINSERT INTO t (a) VALUES ('x;y') ;\n;\nSELECT * FROM t");
  ASSERT_TRUE(statements.ok());
  EXPECT_EQ(*statements, (std::vector<std::string>{"USE ks", "INSERT INTO t (a) VALUES ('x;y')", "SELECT * FROM t"}));
}

TEST(CqlTypes, ComparableFormsSortAsCqlOrdersValues) {
  struct Case {
    const char* type;
    Term::Kind kind;
    std::vector<std::string> ascending;
  };
  const std::vector<Case> cases = {
      {"int", Term::Kind::kInteger, {"-2147483648", "-5", "-1", "0", "1", "300", "2147483647"}},
      {"bigint", Term::Kind::kInteger, {"-9000000000", "-1", "0", "9000000000"}},
      {"tinyint", Term::Kind::kInteger, {"-128", "-1", "0", "127"}},
      {"double", Term::Kind::kFloat, {"-1e300", "-2.5", "-0.5", "0.0", "0.25", "3.5", "1e300"}},
      {"float", Term::Kind::kFloat, {"-3.5", "-0.1", "0.0", "0.1", "2.5"}},
      {"varint", Term::Kind::kInteger, {"-70000", "-129", "-128", "-1", "0", "1", "127", "128", "70000"}},
      {"text", Term::Kind::kString, {"", "a", "ab", "b", "\xc3\xa9"}},
      {"timestamp", Term::Kind::kString, {"1969-12-31 23:59:59", "1970-01-01", "2024-02-29 12:00:00+0000"}},
      {"timeuuid", Term::Kind::kUuid, {"ffffffff-ffff-1000-8000-000000000000", "00000000-0000-1001-8000-000000000000",
                                       "00000000-0001-1001-8000-000000000000", "00000000-0001-1001-0000-000000000000"}},
  };
  for (const Case& test : cases) {
    const Type type = *ParseType(test.type);
    std::string previous;
    for (size_t i = 0; i < test.ascending.size(); i++) {
      const std::string native = Native(type, test.kind, test.ascending[i]);
      ASSERT_TRUE(ValidateNative(type, native).ok()) << test.type << " " << test.ascending[i];
      const std::string comparable = ToComparable(type, native);
      EXPECT_EQ(FromComparable(type, comparable), native) << test.type << " " << test.ascending[i];
      if (i > 0) {
        EXPECT_LT(previous, comparable) << test.type << ": " << test.ascending[i - 1] << " < " << test.ascending[i];
      }
      previous = comparable;
    }
  }
}

TEST(CqlTypes, AVarintHasOneStoredFormWhateverItsEncoding) {
  const Type varint = *ParseType("varint");
  EXPECT_EQ(ToComparable(varint, std::string("\0\1", 2)), ToComparable(varint, std::string("\1", 1)));
  EXPECT_EQ(ToComparable(varint, std::string("\xff\xff", 2)), ToComparable(varint, std::string("\xff", 1)));
  EXPECT_LT(ToComparable(varint, std::string("\0\1", 2)), ToComparable(varint, std::string("\2", 1)));
}

// A generated mutant that read `true` as false survived every test before
// this one (docs/mutations.md).
TEST(CqlTypes, LiteralsEncodeAsTheProtocolSays) {
  auto value = [](const char* type, Term::Kind kind, const char* text) {
    absl::StatusOr<std::optional<std::string>> encoded = LiteralValue(*ParseType(type), Term{kind, text, -1, {}});
    EXPECT_TRUE(encoded.ok()) << type << " " << text;
    return encoded.ok() && encoded->has_value() ? **encoded : std::string("<none>");
  };
  EXPECT_EQ(value("boolean", Term::Kind::kBoolean, "true"), std::string("\x01", 1));
  EXPECT_EQ(value("boolean", Term::Kind::kBoolean, "false"), std::string("\x00", 1));
  EXPECT_EQ(value("int", Term::Kind::kInteger, "5"), std::string("\0\0\0\x05", 4));
  EXPECT_EQ(value("int", Term::Kind::kInteger, "-2"), std::string("\xff\xff\xff\xfe", 4));
  EXPECT_EQ(value("bigint", Term::Kind::kInteger, "-1"), std::string(8, '\xff'));
  EXPECT_EQ(value("smallint", Term::Kind::kInteger, "258"), std::string("\x01\x02", 2));
  EXPECT_EQ(value("tinyint", Term::Kind::kInteger, "-128"), std::string("\x80", 1));
  EXPECT_EQ(value("text", Term::Kind::kString, "a'b"), "a'b");
  EXPECT_EQ(value("blob", Term::Kind::kHex, "0a0b"), std::string("\x0a\x0b", 2));
  // A date is days since the epoch, centered at 2^31 (m564fb1538c).
  EXPECT_EQ(value("date", Term::Kind::kString, "1970-01-01"), std::string("\x80\0\0\0", 4));
  EXPECT_EQ(value("date", Term::Kind::kString, "1970-01-03"), std::string("\x80\0\0\x02", 4));
  EXPECT_EQ(value("date", Term::Kind::kString, "1969-12-31"), std::string("\x7f\xff\xff\xff", 4));
  EXPECT_EQ(value("timestamp", Term::Kind::kString, "1970-01-01 00:00:01+0000"), std::string("\0\0\0\0\0\0\x03\xe8", 8));
  EXPECT_FALSE(LiteralValue(*ParseType("int"), Term{Term::Kind::kNull, "", -1, {}})->has_value());
}

TEST(CqlTypes, RejectsConstantsOfTheWrongKind) {
  EXPECT_FALSE(LiteralValue(*ParseType("int"), Term{Term::Kind::kString, "1", -1, {}}).ok());
  EXPECT_FALSE(LiteralValue(*ParseType("int"), Term{Term::Kind::kInteger, "2147483648", -1, {}}).ok());
  // Each width's bounds, both ends: the lowest value fits, one below not.
  for (const auto& [type, lowest, below] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"tinyint", "-128", "-129"}, {"smallint", "-32768", "-32769"}, {"int", "-2147483648", "-2147483649"}}) {
    EXPECT_TRUE(LiteralValue(*ParseType(type), Term{Term::Kind::kInteger, lowest, -1, {}}).ok()) << type;
    EXPECT_FALSE(LiteralValue(*ParseType(type), Term{Term::Kind::kInteger, below, -1, {}}).ok()) << type;
  }
  EXPECT_FALSE(LiteralValue(*ParseType("blob"), Term{Term::Kind::kString, "x", -1, {}}).ok());
  EXPECT_FALSE(LiteralValue(*ParseType("timeuuid"), Term{Term::Kind::kUuid, "00000000-0000-4000-8000-000000000000", -1, {}}).ok());
  EXPECT_FALSE(ValidateNative(*ParseType("int"), "abc").ok());
  EXPECT_FALSE(ValidateNative(*ParseType("text"), "\xff").ok());
  EXPECT_EQ(TypeName(*ParseType("frozen<map<varchar, text>>")), "frozen<map<text, text>>");
  EXPECT_EQ(TypeName(*ParseType("map<text, frozen<list<int>>>")), "map<text, frozen<list<int>>>");
  EXPECT_FALSE(ParseType("frozen<int>").has_value());
  EXPECT_FALSE(ParseType("list<set<int>>").has_value());  // nested only frozen
  EXPECT_FALSE(ParseType("set<decimal>").has_value());  // elements name cells: ordered types only
  EXPECT_FALSE(ValidateNative(*ParseType("map<int, int>"), NativeCollection({NativeInt(1)})).ok());  // a key without its value
  EXPECT_TRUE(ValidateNative(*ParseType("map<int, int>"), NativeMap({{NativeInt(1), NativeInt(2)}})).ok());
}

TEST(CqlSchema, ClusteringKeysSortInCqlOrderAscAndDesc) {
  const Schema schema = MakeSchema({"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
                                    "CREATE TABLE ks.t (k int, a text, b int, v int, PRIMARY KEY (k, a, b)) "
                                    "WITH CLUSTERING ORDER BY (a ASC, b DESC)"});
  const Table& table = *schema.FindTable("ks", "t");
  const Type text = *ParseType("text"), integer = *ParseType("int");
  const auto key = [&](const std::string& a, const std::string& b) {
    return EncodeClustering(table, {Native(text, Term::Kind::kString, a), Native(integer, Term::Kind::kInteger, b)});
  };
  // a ascending (with a zero byte inside), then b descending.
  const std::vector<std::string> ordered = {key("a", "5"), key("a", "-1"), key(std::string("a\0", 2), "0"), key("ab", "9"), key("b", "0")};
  for (size_t i = 1; i < ordered.size(); i++) EXPECT_LT(ordered[i - 1], ordered[i]) << i;
  EXPECT_EQ(DecodeClustering(table, ordered[2]),
            (std::vector<std::string>{std::string("a\0", 2), Native(integer, Term::Kind::kInteger, "0")}));
  // A prefix's range holds exactly the keys that extend it.
  const std::string prefix = EncodeClustering(table, {Native(text, Term::Kind::kString, "a")});
  EXPECT_LE(prefix, ordered[0]);
  EXPECT_LT(ordered[1], PrefixEnd(prefix));
  EXPECT_GE(ordered[2], PrefixEnd(prefix));
}

TEST(CqlSchema, CompositePartitionKeysAreCassandrasSerializedForm) {
  const Schema schema = MakeSchema({"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
                                    "CREATE TABLE ks.t (a int, b text, v int, PRIMARY KEY ((a, b)))"});
  const Table& table = *schema.FindTable("ks", "t");
  const std::string key = EncodePartitionKey(table, {std::string("\0\0\0\1", 4), "xy"});
  EXPECT_EQ(key, std::string("\0\4\0\0\0\1\0\0\2xy\0", 12));
  EXPECT_EQ(DecodePartitionKey(table, key), (std::vector<std::string>{std::string("\0\0\0\1", 4), "xy"}));
}

TEST(CqlSchema, RejectsBadTables) {
  Schema schema = MakeSchema({"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"});
  for (const char* text : {"CREATE TABLE ks.t (a int, v int)", "CREATE TABLE ks.t (a int PRIMARY KEY, a text)",
                           "CREATE TABLE ks.t (a decimal PRIMARY KEY)", "CREATE TABLE nope.t (a int PRIMARY KEY)",
                           "CREATE TABLE ks.t (a int, b int, PRIMARY KEY (a, b)) WITH CLUSTERING ORDER BY (a DESC)",
                           "CREATE TABLE ks.t (a list<int> PRIMARY KEY)"}) {
    EXPECT_FALSE(schema.Apply(std::get<CreateTable>(ParseOk(text).statement)).ok()) << text;
  }
  EXPECT_EQ(schema.Apply(std::get<CreateKeyspace>(ParseOk("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy'}").statement)).code(),
            absl::StatusCode::kAlreadyExists);
}

TEST(CqlSchema, TablesKeepTheirTombstoneGc) {
  Schema schema = MakeSchema(
      {"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
       "CREATE TABLE ks.d (a int PRIMARY KEY, v int)",
       "CREATE TABLE ks.t (a int PRIMARY KEY, v int) WITH comment = 'x' AND gc_grace_seconds = 60 AND "
       "tombstone_gc = {'mode': 'timeout', 'propagation_delay_in_seconds': '7'}"});
  EXPECT_EQ(schema.FindTable("ks", "d")->gc, TombstoneGc());
  const TombstoneGc& gc = schema.FindTable("ks", "t")->gc;
  EXPECT_EQ(gc.mode, TombstoneGc::Mode::kTimeout);
  EXPECT_EQ(gc.gc_grace_seconds, 60);
  EXPECT_EQ(gc.propagation_delay_seconds, 7);
  for (const char* text : {"CREATE TABLE ks.u (a int PRIMARY KEY) WITH tombstone_gc = {'mode': 'sometimes'}",
                           "CREATE TABLE ks.u (a int PRIMARY KEY) WITH tombstone_gc = {'when': 'now'}",
                           "CREATE TABLE ks.u (a int PRIMARY KEY) WITH gc_grace_seconds = -1",
                           "CREATE TABLE ks.u (a int PRIMARY KEY) WITH gc_grace_seconds = 'soon'"}) {
    EXPECT_FALSE(schema.Apply(std::get<CreateTable>(ParseOk(text).statement)).ok()) << text;
  }
}

// ALTER TABLE ... WITH changes what it names and keeps the rest; a bad
// option changes nothing.
TEST(CqlSchema, AlterTableWithChangesTheTombstoneGcItNames) {
  Schema schema = MakeSchema(
      {"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
       "CREATE TABLE ks.t (a int PRIMARY KEY, v int) WITH gc_grace_seconds = 60 AND "
       "tombstone_gc = {'mode': 'timeout', 'propagation_delay_in_seconds': '7'}"});
  const std::string version = schema.Version();
  ASSERT_TRUE(schema.Apply(std::get<AlterTable>(ParseOk("ALTER TABLE ks.t WITH tombstone_gc = {'mode': 'repair'}").statement), 2).ok());
  const TombstoneGc& gc = schema.FindTable("ks", "t")->gc;
  EXPECT_EQ(gc.mode, TombstoneGc::Mode::kRepair);
  EXPECT_EQ(gc.gc_grace_seconds, 60);
  EXPECT_EQ(gc.propagation_delay_seconds, 7);
  EXPECT_NE(schema.Version(), version);
  ASSERT_TRUE(schema.Apply(std::get<AlterTable>(ParseOk("ALTER TABLE ks.t WITH gc_grace_seconds = 5").statement), 3).ok());
  EXPECT_EQ(schema.FindTable("ks", "t")->gc.gc_grace_seconds, 5);
  EXPECT_EQ(schema.FindTable("ks", "t")->gc.mode, TombstoneGc::Mode::kRepair);
  for (const char* text : {"ALTER TABLE ks.t WITH tombstone_gc = {'mode': 'sometimes'}",
                           "ALTER TABLE ks.t WITH gc_grace_seconds = -1", "ALTER TABLE ks.nope WITH gc_grace_seconds = 1"}) {
    EXPECT_FALSE(schema.Apply(std::get<AlterTable>(ParseOk(text).statement), 4).ok()) << text;
  }
  EXPECT_EQ(schema.FindTable("ks", "t")->gc.gc_grace_seconds, 5);
  // An option it would not keep, or of the wrong shape, is refused: the
  // ALTER would change nothing.
  for (const char* text : {"ALTER TABLE ks.t WITH", "ALTER TABLE ks.t RENAME a TO b", "ALTER TABLE ks.t WITH comment = 'x'",
                           "ALTER TABLE ks.t WITH gc_grace_second = 0", "ALTER TABLE ks.t WITH tombstone_gc = 'timeout'",
                           "ALTER TABLE ks.t WITH gc_grace_seconds = {'a': 'b'}",
                           "CREATE TABLE ks.u (a int PRIMARY KEY) WITH tombstone_gc = 'timeout'"}) {
    EXPECT_FALSE(Parse(text).ok()) << text;
  }
  EXPECT_FALSE(schema.Apply(std::get<AlterTable>(ParseOk("ALTER TABLE ks.t WITH gc_grace_seconds = 3000000000").statement), 5).ok());
}

// What a SCHEMA_CHANGE event says, from the schemas before and after.
std::vector<std::string> ChangesOf(SchemaLog& log, const std::vector<std::string>& statements) {
  const std::shared_ptr<const Schema> before = log.schema();
  for (const std::string& statement : statements) log.Append({"ks", statement});
  std::vector<std::string> changes;
  for (const SchemaChange& change : SchemaChangesBetween(*before, *log.schema())) {
    changes.push_back(change.change + " " + change.target + " " + change.keyspace + (change.table.empty() ? "" : ".") + change.table);
  }
  return changes;
}

// Three nodes in dc1 and two in dc2, replicated 3 and 2 by the cluster.
std::shared_ptr<const TokenRing> TwoDatacenterRing() {
  ClusterLayout layout;
  for (NodeId id = 1; id <= 5; id++) layout.nodes.push_back({id, id <= 3 ? "dc1" : "dc2", "r1"});
  layout.replication.per_datacenter = {{"dc1", 3}, {"dc2", 2}};
  return std::make_shared<const TokenRing>(layout);
}

TEST(CqlSchemaChanges, AreWhatChangedBetweenTwoSchemas) {
  SchemaLog log(std::make_shared<Schema>(), TwoDatacenterRing());
  const std::string keyspace = "CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3}";
  EXPECT_EQ(ChangesOf(log, {"ALTER TABLE nowhere.t ADD w text"}), std::vector<std::string>{});
  EXPECT_EQ(ChangesOf(log, {keyspace, "CREATE TABLE t (k int PRIMARY KEY, v int)", "CREATE TABLE u (k int PRIMARY KEY)"}),
            (std::vector<std::string>{"CREATED KEYSPACE ks", "CREATED TABLE ks.t", "CREATED TABLE ks.u"}));
  EXPECT_EQ(ChangesOf(log, {}), std::vector<std::string>{});
  EXPECT_EQ(ChangesOf(log, {"ALTER TABLE t ADD w text"}), std::vector<std::string>{"UPDATED TABLE ks.t"});
  // Dropped and created again with the same columns: another table.
  EXPECT_EQ(ChangesOf(log, {"DROP TABLE u", "CREATE TABLE u (k int PRIMARY KEY)"}),
            (std::vector<std::string>{"DROPPED TABLE ks.u", "CREATED TABLE ks.u"}));
  EXPECT_EQ(ChangesOf(log, {"DROP TABLE t"}), std::vector<std::string>{"DROPPED TABLE ks.t"});
  // A keyspace's tables go with it, without events of their own.
  EXPECT_EQ(ChangesOf(log, {"DROP KEYSPACE ks"}), std::vector<std::string>{"DROPPED KEYSPACE ks"});
}

// What CREATE KEYSPACE's replication becomes, or why it is refused.
std::string Replication(const std::string& options) {
  Schema schema;
  std::string keyspace;
  const Datacenters datacenters = DatacentersOf(TwoDatacenterRing()->layout());
  absl::Status applied = ApplySchemaStatement("CREATE KEYSPACE ks WITH replication = " + options, datacenters,
                                              &datacenters, 1, schema, keyspace);
  if (!applied.ok()) return absl::StrCat(absl::StatusCodeToString(applied.code()), ": ", applied.message());
  std::string text;
  for (const auto& [option, value] : schema.FindKeyspace("ks")->replication) absl::StrAppend(&text, option, "=", value, " ");
  return text;
}

TEST(CqlReplication, KeyspacesReplicateAsTheyAskWithinTheClustersDatacenters) {
  EXPECT_EQ(Replication("{'class': 'SimpleStrategy', 'replication_factor': 2}"),
            "class=org.apache.cassandra.locator.SimpleStrategy replication_factor=2 ");
  EXPECT_EQ(Replication("{'class': 'NetworkTopologyStrategy', 'dc1': 1}"),
            "class=org.apache.cassandra.locator.NetworkTopologyStrategy dc1=1 ");
  // Cassandra 4: replication_factor is every datacenter's default.
  EXPECT_EQ(Replication("{'class': 'NetworkTopologyStrategy', 'replication_factor': 2, 'dc1': 3}"),
            "class=org.apache.cassandra.locator.NetworkTopologyStrategy dc1=3 dc2=2 ");
  for (const char* refused :
       {"{'class': 'SimpleStrategy', 'replication_factor': 6}", "{'class': 'SimpleStrategy', 'replication_factor': 0}",
        "{'class': 'SimpleStrategy'}", "{'class': 'SimpleStrategy', 'replication_factor': 1, 'dc1': 1}",
        "{'class': 'SimpleStrategy', 'replication_factor': 'two'}", "{'class': 'NetworkTopologyStrategy', 'dc3': 1}",
        "{'class': 'NetworkTopologyStrategy', 'dc2': 3}", "{'class': 'NetworkTopologyStrategy', 'dc1': 0}",
        "{'class': 'NetworkTopologyStrategy', 'dc1': -1}", "{'class': 'LocalStrategy'}", "{'dc1': 1}"}) {
    EXPECT_EQ(Replication(refused).rfind("FAILED_PRECONDITION: keyspace ks: ", 0), 0u) << refused << ": " << Replication(refused);
  }
}

// A cluster grows past its config: a replication is checked against the
// topology's nodes when proposed, and an entry decided is applied alike on
// every node, whatever nodes its topology holds.
TEST(CqlReplication, AFactorFitsTheNodesOfTheTopologyWhenProposedAndAppliesAnywhere) {
  SchemaLog log(std::make_shared<Schema>(), TwoDatacenterRing());  // dc1 3 nodes, dc2 2
  const SchemaLogEntry four{"", "CREATE KEYSPACE four WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 4}"};
  EXPECT_FALSE(log.Check(four).ok());  // the config's three
  EXPECT_FALSE(log.Check(four, Datacenters{{"dc1", 3}, {"dc2", 2}}).ok());
  ASSERT_TRUE(log.Check(four, Datacenters{{"dc1", 4}, {"dc2", 2}}).ok());
  const SchemaLogEntry third{"", "CREATE KEYSPACE third WITH replication = {'class': 'NetworkTopologyStrategy', 'dc3': 1}"};
  EXPECT_FALSE(log.Check(third, Datacenters{{"dc1", 4}}).ok());
  EXPECT_TRUE(log.Check(third, Datacenters{{"dc1", 4}, {"dc3", 1}}).ok());
  log.Append(four);  // on a node whose topology holds three of dc1
  ASSERT_NE(log.schema()->FindKeyspace("four"), nullptr);
  EXPECT_EQ(log.schema()->FindKeyspace("four")->replication.at("dc1"), "4");
}

TEST(CqlBootstrap, AUseStatementNamesTheKeyspaceOfTheTablesAfterIt) {
  const BootstrapSchema bootstrap = BuildBootstrapSchema(
      {"CREATE KEYSPACE shop WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 1}", "USE shop",
       "CREATE TABLE carts (id int PRIMARY KEY, total bigint)"},
      DatacentersOf(TwoDatacenterRing()->layout()));
  EXPECT_TRUE(bootstrap.problems.empty());
  ASSERT_NE(bootstrap.schema, nullptr);
  EXPECT_NE(bootstrap.schema->FindTable("shop", "carts"), nullptr);
}

TEST(CqlReplication, AnAlterOfAReplicationIsAskedOfTheTopologyAndAppliedAfter) {
  SchemaLog log(std::make_shared<Schema>(), TwoDatacenterRing());
  for (const char* statement : {"CREATE KEYSPACE gone WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
                                "DROP KEYSPACE gone",
                                "CREATE KEYSPACE one WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
                                "CREATE TABLE one.t (k int PRIMARY KEY)"}) {
    ASSERT_TRUE(log.Check({"", statement}).ok()) << statement;
    log.Append({"", statement});
  }
  const std::string table = log.schema()->FindTable("one", "t")->storage;
  EXPECT_EQ(log.ReplicationOf(table).keyspace, "one");
  EXPECT_EQ(log.ReplicationOf(table).keyspace_created_at, 3u);  // its life: entry 3, not gone's 1
  const SchemaLogEntry raise{"", "ALTER KEYSPACE one WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2} AND durable_writes = true"};
  ASSERT_TRUE(log.Check(raise).ok());
  const std::optional<SchemaLog::ReplicationChange> change = log.ReplicationChangeOf(raise);
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->now.replication.replication_factor, 1u);
  EXPECT_EQ(change->to.replication_factor, 2u);
  EXPECT_EQ(change->now.keyspace_created_at, 3u);
  // durable_writes only, or the same replication: the schema's alone.
  EXPECT_FALSE(log.ReplicationChangeOf({"", "ALTER KEYSPACE one WITH durable_writes = false"}).has_value());
  EXPECT_FALSE(log.ReplicationChangeOf({"", "ALTER KEYSPACE one WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"}).has_value());
  EXPECT_FALSE(log.Check({"", "ALTER KEYSPACE none WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"}).ok());
  EXPECT_FALSE(log.Check({"", "ALTER KEYSPACE one WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 9}"}).ok());
  EXPECT_FALSE(log.Check({"", "ALTER KEYSPACE system WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"}).ok());
  log.Append(raise);
  EXPECT_EQ(log.ReplicationOf(table).replication.replication_factor, 2u);
  EXPECT_EQ(log.schema()->FindKeyspace("one")->replication.at("replication_factor"), "2");
}

TEST(CqlReplication, EachTableIsReplicatedAsItsKeyspace) {
  const std::shared_ptr<const TokenRing> cluster = TwoDatacenterRing();
  SchemaLog log(std::make_shared<Schema>(), cluster);
  for (const char* statement : {"CREATE KEYSPACE one WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
                                "CREATE KEYSPACE west WITH replication = {'class': 'NetworkTopologyStrategy', 'dc2': 2}",
                                "CREATE KEYSPACE same WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc2': 2}",
                                "CREATE TABLE one.t (k int PRIMARY KEY)", "CREATE TABLE west.t (k int PRIMARY KEY)",
                                "CREATE TABLE same.t (k int PRIMARY KEY)"}) {
    ASSERT_TRUE(log.Check({"", statement}).ok()) << statement;
    log.Append({"", statement});
  }
  const std::string one = log.schema()->FindTable("one", "t")->storage, west = log.schema()->FindTable("west", "t")->storage;
  EXPECT_EQ(log.ReplicationOf(one).replication.strategy, ReplicationConfig::Strategy::kSimple);
  EXPECT_EQ(log.ReplicationOf(one).replication.replication_factor, 1u);
  EXPECT_EQ(log.ReplicationOf(west).replication.per_datacenter, (std::map<std::string, uint32_t>{{"dc2", 2}}));
  // Under it, the cluster's nodes place a table's replicas: dc2's only for west.
  ClusterLayout layout = cluster->layout();
  layout.replication = log.ReplicationOf(west).replication;
  const TokenRing west_ring(layout);
  for (charybdis::Token token : {int64_t{-7}, int64_t{0}, int64_t{123456789}}) {
    for (NodeId replica : west_ring.ReplicasOf(token)) EXPECT_GE(replica, 4u);  // dc2's nodes
    EXPECT_EQ(west_ring.ReplicasOf(token).size(), 2u);
  }
  // Tables outside CQL keyspaces are replicated as the cluster.
  EXPECT_EQ(log.ReplicationOf(log.schema()->FindTable("same", "t")->storage).replication, cluster->layout().replication);
  EXPECT_EQ(log.ReplicationOf(kSchemaLogTable).replication, cluster->layout().replication);
  EXPECT_EQ(log.ReplicationOf("kv").replication, cluster->layout().replication);
}

TEST(CqlSystemTables, DescribeThemselvesAndTheUserSchema) {
  const Schema user = MakeSchema({"CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '3'}",
                                  "CREATE TABLE ks.t (k int, c int, v text, PRIMARY KEY (k, c))"});
  ASSERT_NE(SystemSchema().FindTable("system", "local"), nullptr);
  const Table& columns = *SystemSchema().FindTable("system_schema", "columns");
  std::vector<ResultRow> rows = SystemRows(columns, user, ClusterView{});
  int user_columns = 0;
  for (const ResultRow& row : rows) user_columns += *row[columns.IndexOf("keyspace_name")] == "ks";
  EXPECT_EQ(user_columns, 3);
  // The table options drivers and cqlsh's DESCRIBE show: Cassandra's
  // defaults, and the speculative retry the coordinators run.
  const Table& tables = *SystemSchema().FindTable("system_schema", "tables");
  int described = 0;
  for (const ResultRow& row : SystemRows(tables, user, ClusterView{})) {
    if (*row[tables.IndexOf("keyspace_name")] != "ks") continue;
    described++;
    EXPECT_EQ(*row[tables.IndexOf("table_name")], "t");
    EXPECT_EQ(*row[tables.IndexOf("default_time_to_live")], NativeInt(0));
    EXPECT_EQ(*row[tables.IndexOf("gc_grace_seconds")], NativeInt(864000));  // ten days
    EXPECT_EQ(*row[tables.IndexOf("speculative_retry")], "99PERCENTILE");
  }
  EXPECT_EQ(described, 1);
  EXPECT_EQ(user.Version(), MakeSchema({"CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '3'}",
                                        "CREATE TABLE ks.t (k int, c int, v text, PRIMARY KEY (k, c))"})
                                .Version());
}

}  // namespace
}  // namespace charybdis::cql
