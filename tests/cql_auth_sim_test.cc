// Logins and roles (docs/security.md) on a simulated 3-node cluster whose
// CQL port asks for a password: core/cql's PasswordAuthenticator, the
// system_auth keyspace it makes, and CREATE, ALTER, DROP and LIST ROLES,
// the same code real nodes run, with the simulator's stand-in for bcrypt.

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/auth_sim_test_base.h"
#include "tests/sim_cql_client.h"

namespace charybdis::sim {
namespace {

using testing::BaseScenario;
using testing::MustParse;

constexpr char kSchema[] = R"pb(schema {
  cql: "CREATE KEYSPACE app WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3}"
  cql: "CREATE TABLE app.accounts (id text PRIMARY KEY, balance bigint)"
})pb";

int32_t CodeOf(const std::string& body) {
  cql::Reader in(body);
  return in.Int();
}

std::string MessageOf(const std::string& body) {
  cql::Reader in(body);
  in.Int();
  return in.String();
}

class CqlAuthSimTest : public AuthSimTestBase {
 protected:
  CqlAuthSimTest() : AuthSimTestBase(BaseScenario(kSchema)) { Start(); }

  // A new connection to node 1 from `peer`, STARTUP sent; the answer's
  // opcode is AUTHENTICATE.
  std::unique_ptr<SimCqlClient> Connect(const std::string& peer = "10.0.0.1") {
    auto client = std::make_unique<SimCqlClient>(simulator_, cluster_, 1, &auth_, peer);
    client->Send(cql::Opcode::kStartup, StartupBody());
    const cql::FrameHeader header = cql::ParseHeader(client->answers().back());
    EXPECT_EQ(header.opcode, static_cast<uint8_t>(cql::Opcode::kAuthenticate));
    return client;
  }

  // Logs in: "" on AUTH_SUCCESS, else the error's code and message.
  std::string Login(SimCqlClient& client, const std::string& role, const std::string& password) {
    const std::string body = client.Send(cql::Opcode::kAuthResponse, AuthResponseBody(role, password));
    const cql::FrameHeader header = cql::ParseHeader(client.answers().back());
    if (header.opcode == static_cast<uint8_t>(cql::Opcode::kAuthSuccess)) return "";
    return absl::StrCat(CodeOf(body), ": ", MessageOf(body));
  }

  std::unique_ptr<SimCqlClient> LoggedIn(const std::string& role, const std::string& password) {
    auto client = Connect();
    EXPECT_EQ(Login(*client, role, password), "");
    return client;
  }

  // A query's error ("code: message"), or "" when it succeeded.
  static std::string ErrorOf(const std::string& body) {
    const int32_t code = CodeOf(body);
    return code > 0x10 ? absl::StrCat(code, ": ", MessageOf(body)) : "";
  }

};

constexpr int32_t kBadCredentials = 0x0100;
constexpr int32_t kUnauthorized = 0x2100;

TEST_F(CqlAuthSimTest, TheSuperuserLogsInAndThenRunsStatements) {
  auto client = Connect();
  EXPECT_EQ(Login(*client, "admin", "s3cret"), "");
  EXPECT_EQ(ErrorOf(client->Query("INSERT INTO app.accounts (id, balance) VALUES ('a', 1)")), "");
  // The first login made system_auth, replicated across the three nodes.
  const cql::Keyspace* keyspace = cluster_.node(1).Schema().schema->FindKeyspace("system_auth");
  ASSERT_NE(keyspace, nullptr);
}

TEST_F(CqlAuthSimTest, NothingRunsBeforeALogin) {
  auto client = Connect();
  EXPECT_FALSE(client->Offer(cql::Opcode::kQuery, QueryBody("SELECT * FROM app.accounts", CL_ONE)));
  EXPECT_EQ(CodeOf(client->answers().back().substr(cql::kHeaderBytes)), 0x000A);  // protocol error
  EXPECT_NE(client->answers().back().find("expecting AUTH_RESPONSE"), std::string::npos);
}

TEST_F(CqlAuthSimTest, AWrongPasswordAndAnUnknownRoleFailAlikeAfterAHash) {
  auto client = Connect();
  EXPECT_EQ(Login(*client, "admin", "s3cret"), "");  // made system_auth and the superuser
  for (const auto& [role, password] : std::vector<std::pair<std::string, std::string>>{
           {"admin", "wrong"}, {"nobody", "s3cret"}, {"admin", std::string(100, 'x')}}) {
    auto attempt = Connect(absl::StrCat("10.0.1.", role.size()));
    const Nanos began = simulator_.now();
    EXPECT_EQ(Login(*attempt, role, password),
              absl::StrCat(kBadCredentials, ": Provided username ", role, " and/or password are incorrect"));
    // Each failure costs one hash, whether or not the role exists.
    EXPECT_GE(simulator_.now() - began, SimPasswordHasher::kHashTime) << role;
    EXPECT_EQ(attempt->Reached("auth.login_failed"), 1);
  }
}

TEST_F(CqlAuthSimTest, AMalformedTokenIsRefusedAndTheConnectionMayTryAgain) {
  auto client = Connect();
  cql::Writer no_separators;
  no_separators.Bytes(std::string("admin"));
  const std::string body = client->Send(cql::Opcode::kAuthResponse, no_separators.Take());
  EXPECT_EQ(CodeOf(body), kBadCredentials);
  EXPECT_EQ(client->Reached("auth.malformed_token"), 1);
  EXPECT_EQ(Login(*client, "admin", "s3cret"), "");
}

TEST_F(CqlAuthSimTest, RepeatedFailuresFromOneAddressAreSlowedDown) {
  auto first = Connect("10.9.9.9");
  EXPECT_EQ(Login(*first, "admin", "s3cret"), "");
  Nanos last_failure = 0;
  for (int i = 0; i < auth::LoginThrottle::kFreeFailures + 2; i++) {
    auto client = Connect("10.9.9.9");
    const Nanos began = simulator_.now();
    EXPECT_NE(Login(*client, "admin", "guess"), "");
    last_failure = simulator_.now() - began;
  }
  // The last two waited: 100 ms, then 200 ms, before their hash.
  EXPECT_GE(last_failure, SimPasswordHasher::kHashTime + 2 * auth::LoginThrottle::kFirstDelay);
  // Another address is not slowed down.
  auto other = Connect("10.8.8.8");
  const Nanos began = simulator_.now();
  EXPECT_NE(Login(*other, "admin", "guess"), "");
  EXPECT_LT(simulator_.now() - began, SimPasswordHasher::kHashTime + auth::LoginThrottle::kFirstDelay);
}

TEST_F(CqlAuthSimTest, RolesAreCreatedAlteredListedAndDropped) {
  auto admin = LoggedIn("admin", "s3cret");
  EXPECT_EQ(ErrorOf(admin->Query("CREATE ROLE alice WITH PASSWORD = 'pw1' AND LOGIN = true")), "");
  EXPECT_EQ(ErrorOf(admin->Query("CREATE ROLE alice WITH PASSWORD = 'pw2' AND LOGIN = true")),
            absl::StrCat(0x2200, ": alice already exists"));
  EXPECT_EQ(ErrorOf(admin->Query("CREATE ROLE IF NOT EXISTS alice WITH PASSWORD = 'pw2' AND LOGIN = true")), "");
  auto alice = LoggedIn("alice", "pw1");  // IF NOT EXISTS changed nothing
  // Logged in, but granted nothing yet (EveryStatementNeedsItsPermission).
  EXPECT_EQ(CodeOf(alice->Query("INSERT INTO app.accounts (id, balance) VALUES ('b', 2)")), kUnauthorized);

  // alice is no superuser: she may change her own password, nothing else.
  EXPECT_EQ(CodeOf(alice->Query("CREATE ROLE mallory WITH PASSWORD = 'x' AND LOGIN = true")), kUnauthorized);
  EXPECT_EQ(CodeOf(alice->Query("ALTER ROLE alice WITH SUPERUSER = true")), kUnauthorized);
  EXPECT_EQ(CodeOf(alice->Query("ALTER ROLE admin WITH PASSWORD = 'mine'")), kUnauthorized);
  EXPECT_EQ(CodeOf(alice->Query("DROP ROLE admin")), kUnauthorized);
  EXPECT_EQ(ErrorOf(alice->Query("ALTER ROLE alice WITH PASSWORD = 'pw3'")), "");
  EXPECT_NE(Login(*Connect(), "alice", "pw1"), "");
  EXPECT_EQ(Login(*Connect(), "alice", "pw3"), "");

  // LIST ROLES: every role for a superuser, herself for alice.
  admin->Query("LIST ROLES");
  EXPECT_EQ(DecodeAnswer(admin->answers().back()).rows.size(), 2u);
  alice->Query("LIST ROLES");
  EXPECT_EQ(DecodeAnswer(alice->answers().back()).rows.size(), 1u);

  EXPECT_EQ(ErrorOf(admin->Query("DROP ROLE admin")), absl::StrCat(0x2200, ": Cannot DROP primary role for current login"));
  EXPECT_EQ(ErrorOf(admin->Query("DROP ROLE alice")), "");
  EXPECT_EQ(ErrorOf(admin->Query("DROP ROLE alice")), absl::StrCat(0x2200, ": alice doesn't exist"));
  EXPECT_EQ(ErrorOf(admin->Query("DROP ROLE IF EXISTS alice")), "");
  EXPECT_NE(Login(*Connect(), "alice", "pw3"), "");
  // Her open connection runs no role statement once she is gone.
  EXPECT_EQ(CodeOf(alice->Query("LIST ROLES")), kUnauthorized);
}

TEST_F(CqlAuthSimTest, ASuperuserStatusTakenAwayCountsAtOnce) {
  auto admin = LoggedIn("admin", "s3cret");
  EXPECT_EQ(ErrorOf(admin->Query("CREATE ROLE boss WITH PASSWORD = 'b' AND LOGIN = true AND SUPERUSER = true")), "");
  auto boss = LoggedIn("boss", "b");
  EXPECT_EQ(ErrorOf(boss->Query("CREATE ROLE temp WITH LOGIN = false")), "");
  EXPECT_EQ(CodeOf(admin->Query("ALTER ROLE admin WITH SUPERUSER = false")), kUnauthorized);  // not her own
  EXPECT_EQ(ErrorOf(admin->Query("ALTER ROLE boss WITH SUPERUSER = false")), "");
  EXPECT_EQ(CodeOf(boss->Query("CREATE ROLE temp2 WITH LOGIN = false")), kUnauthorized);
  // A role that may not log in cannot, even with a password.
  EXPECT_EQ(ErrorOf(admin->Query("ALTER ROLE temp WITH PASSWORD = 't'")), "");
  EXPECT_NE(Login(*Connect(), "temp", "t"), "");
}

TEST_F(CqlAuthSimTest, NoClientStatementTouchesSystemAuth) {
  auto admin = LoggedIn("admin", "s3cret");
  for (const char* statement :
       {"SELECT * FROM system_auth.roles", "INSERT INTO system_auth.roles (role, is_superuser) VALUES ('eve', true)",
        "UPDATE system_auth.roles SET is_superuser = true WHERE role = 'admin'",
        "DELETE FROM system_auth.roles WHERE role = 'admin'", "DROP KEYSPACE system_auth",
        "DROP TABLE system_auth.roles", "ALTER TABLE system_auth.roles ADD note text",
        "BEGIN BATCH INSERT INTO system_auth.roles (role, can_login) VALUES ('eve', true); "
        "INSERT INTO system_auth.roles (role, is_superuser) VALUES ('eve', true) APPLY BATCH"}) {
    EXPECT_EQ(CodeOf(admin->Query(statement)), kUnauthorized) << statement;
  }
  admin->Query("USE system_auth");
  EXPECT_EQ(CodeOf(admin->Query("SELECT * FROM roles")), kUnauthorized);
}

TEST_F(CqlAuthSimTest, BadRoleStatementsAreRefusedClearly) {
  auto admin = LoggedIn("admin", "s3cret");
  EXPECT_EQ(ErrorOf(admin->Query(absl::StrCat("CREATE ROLE long WITH PASSWORD = '", std::string(73, 'p'), "'"))),
            absl::StrCat(0x2200, ": a password has at most 72 bytes"));
  EXPECT_EQ(ErrorOf(admin->Query("CREATE ROLE empty WITH PASSWORD = ''")),
            absl::StrCat(0x2200, ": a password must not be empty"));
  // crypt(3) stops at a NUL: 'ab' would then log in for 'ab\0cd'.
  EXPECT_EQ(ErrorOf(admin->Query(std::string("CREATE ROLE nul WITH PASSWORD = 'ab\0cd'", 39))),
            absl::StrCat(0x2200, ": a password must not hold a NUL byte"));
  EXPECT_EQ(CodeOf(admin->Query("CREATE ROLE r WITH LOGIN = 'yes'")), 0x2000);  // syntax
  EXPECT_EQ(CodeOf(admin->Query("CREATE ROLE r WITH LOGIN = true AND LOGIN = false")), 0x2000);
  EXPECT_EQ(CodeOf(admin->Query("CREATE ROLE r WITH OPTIONS = true")), 0x2000);
  EXPECT_EQ(ErrorOf(admin->Query("ALTER ROLE ghost WITH PASSWORD = 'x'")), absl::StrCat(0x2200, ": ghost doesn't exist"));
}

// Each statement needs its permission (docs/security.md); a GRANT or
// REVOKE counts on an open connection once its cached permissions expire.
TEST_F(CqlAuthSimTest, ACreatorMayUseWhatItCreatedAndNoOneElseMay) {
  auto admin = LoggedIn("admin", "s3cret");
  for (const char* role : {"builder", "other"}) {
    EXPECT_EQ(ErrorOf(admin->Query(absl::StrCat("CREATE ROLE ", role, " WITH PASSWORD = 'pw' AND LOGIN = true"))), "");
  }
  EXPECT_EQ(ErrorOf(admin->Query("GRANT CREATE ON ALL KEYSPACES TO builder")), "");
  EXPECT_EQ(ErrorOf(admin->Query("GRANT CREATE ON ALL KEYSPACES TO other")), "");
  auto builder = LoggedIn("builder", "pw");
  EXPECT_EQ(ErrorOf(builder->Query(
                "CREATE KEYSPACE shop WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3}")),
            "");
  EXPECT_EQ(ErrorOf(builder->Query("CREATE TABLE shop.items (id text PRIMARY KEY, price bigint)")), "");
  EXPECT_EQ(ErrorOf(builder->Query("INSERT INTO shop.items (id, price) VALUES ('a', 1)")), "");
  EXPECT_EQ(ErrorOf(builder->Query("SELECT * FROM shop.items")), "");
  EXPECT_EQ(ErrorOf(builder->Query("DROP TABLE shop.items")), "");
  EXPECT_EQ(builder->Reached("auth.schema_change_grants_failed"), 0);
  // Another creator's IF NOT EXISTS of what exists gives it nothing.
  EXPECT_EQ(ErrorOf(builder->Query("CREATE TABLE shop.orders (id text PRIMARY KEY, total bigint)")), "");
  auto other = LoggedIn("other", "pw");
  EXPECT_EQ(ErrorOf(other->Query("CREATE TABLE IF NOT EXISTS shop.orders (id text PRIMARY KEY, total bigint)")), "");
  EXPECT_EQ(CodeOf(other->Query("SELECT * FROM shop.orders")), kUnauthorized);
  EXPECT_EQ(CodeOf(other->Query("DROP KEYSPACE shop")), kUnauthorized);
  // What was dropped takes its grants along: a table created again under
  // its name is its new creator's alone (in a keyspace neither created).
  EXPECT_EQ(ErrorOf(builder->Query("CREATE TABLE app.stalls (id text PRIMARY KEY, owner text)")), "");
  EXPECT_EQ(ErrorOf(builder->Query("DROP TABLE app.stalls")), "");
  EXPECT_EQ(ErrorOf(other->Query("CREATE TABLE app.stalls (id text PRIMARY KEY, owner text)")), "");
  EXPECT_EQ(ErrorOf(other->Query("INSERT INTO app.stalls (id, owner) VALUES ('b', 'other')")), "");
  RunFor(cql::Connection::kPermissionsValidity);
  EXPECT_EQ(CodeOf(builder->Query("SELECT * FROM app.stalls")), kUnauthorized);
  EXPECT_EQ(builder->Reached("auth.schema_change_grants_failed"), 0);
}

TEST_F(CqlAuthSimTest, ARoleHoldsWhatTheRolesGrantedToItHold) {
  auto admin = LoggedIn("admin", "s3cret");
  EXPECT_EQ(ErrorOf(admin->Query("CREATE ROLE readers WITH LOGIN = false")), "");
  EXPECT_EQ(ErrorOf(admin->Query("CREATE ROLE staff WITH LOGIN = false")), "");
  EXPECT_EQ(ErrorOf(admin->Query("CREATE ROLE alice WITH PASSWORD = 'pw' AND LOGIN = true")), "");
  EXPECT_EQ(ErrorOf(admin->Query("GRANT SELECT ON KEYSPACE app TO readers")), "");
  // alice holds staff, which holds readers: she reads, transitively.
  EXPECT_EQ(ErrorOf(admin->Query("GRANT readers TO staff")), "");
  EXPECT_EQ(ErrorOf(admin->Query("GRANT staff TO alice")), "");
  auto alice = LoggedIn("alice", "pw");
  EXPECT_EQ(ErrorOf(alice->Query("SELECT * FROM app.accounts")), "");
  EXPECT_EQ(CodeOf(alice->Query("INSERT INTO app.accounts (id, balance) VALUES ('r', 1)")), kUnauthorized);
  // Only superusers grant roles; no cycles; both roles must exist.
  EXPECT_EQ(CodeOf(alice->Query("GRANT readers TO alice")), kUnauthorized);
  EXPECT_EQ(ErrorOf(admin->Query("GRANT alice TO readers")), absl::StrCat(0x2200, ": readers is a member of alice"));
  EXPECT_EQ(ErrorOf(admin->Query("GRANT nobody TO alice")), absl::StrCat(0x2200, ": nobody doesn't exist"));
  // A superuser role held makes its holder one.
  EXPECT_EQ(ErrorOf(admin->Query("CREATE ROLE admins WITH LOGIN = false AND SUPERUSER = true")), "");
  EXPECT_EQ(ErrorOf(admin->Query("GRANT admins TO staff")), "");
  RunFor(cql::Connection::kPermissionsValidity);
  EXPECT_EQ(ErrorOf(alice->Query("CREATE ROLE temp WITH LOGIN = false")), "");
  // Revoked, or the held role dropped: gone within the cache's 2 s.
  EXPECT_EQ(ErrorOf(admin->Query("REVOKE admins FROM staff")), "");
  EXPECT_EQ(ErrorOf(admin->Query("DROP ROLE readers")), "");
  RunFor(cql::Connection::kPermissionsValidity);
  EXPECT_EQ(CodeOf(alice->Query("SELECT * FROM app.accounts")), kUnauthorized);
  EXPECT_EQ(CodeOf(alice->Query("CREATE ROLE temp2 WITH LOGIN = false")), kUnauthorized);
  // A role created again under a dropped one's name is granted to no one.
  EXPECT_EQ(ErrorOf(admin->Query("CREATE ROLE readers WITH LOGIN = false")), "");
  EXPECT_EQ(ErrorOf(admin->Query("GRANT SELECT ON KEYSPACE app TO readers")), "");
  RunFor(cql::Connection::kPermissionsValidity);
  EXPECT_EQ(CodeOf(alice->Query("SELECT * FROM app.accounts")), kUnauthorized);
}

TEST_F(CqlAuthSimTest, EveryStatementNeedsItsPermission) {
  auto admin = LoggedIn("admin", "s3cret");
  for (const char* role : {"reader", "writer"}) {
    EXPECT_EQ(ErrorOf(admin->Query(absl::StrCat("CREATE ROLE ", role, " WITH PASSWORD = 'pw' AND LOGIN = true"))), "");
  }
  auto reader = LoggedIn("reader", "pw");
  auto writer = LoggedIn("writer", "pw");
  EXPECT_EQ(ErrorOf(reader->Query("SELECT * FROM app.accounts")),
            absl::StrCat(kUnauthorized, ": User reader has no SELECT permission on <table app.accounts> or any of its parents"));
  EXPECT_EQ(ErrorOf(reader->Query("SELECT * FROM system.local")), "");  // drivers read these
  EXPECT_EQ(ErrorOf(admin->Query("GRANT SELECT ON KEYSPACE app TO reader")), "");
  EXPECT_EQ(CodeOf(reader->Query("SELECT * FROM app.accounts")), kUnauthorized);  // cached for 2 s
  RunFor(cql::Connection::kPermissionsValidity);
  EXPECT_EQ(ErrorOf(reader->Query("SELECT * FROM app.accounts")), "");
  EXPECT_EQ(CodeOf(reader->Query("INSERT INTO app.accounts (id, balance) VALUES ('r', 1)")), kUnauthorized);
  EXPECT_EQ(CodeOf(reader->Query("BEGIN BATCH INSERT INTO app.accounts (id, balance) VALUES ('r', 1) APPLY BATCH")),
            kUnauthorized);

  // MODIFY writes; a condition reads too, so it needs SELECT as well.
  EXPECT_EQ(ErrorOf(admin->Query("GRANT MODIFY ON TABLE app.accounts TO writer")), "");
  RunFor(cql::Connection::kPermissionsValidity);
  EXPECT_EQ(ErrorOf(writer->Query("INSERT INTO app.accounts (id, balance) VALUES ('w', 1)")), "");
  EXPECT_EQ(ErrorOf(writer->Query("BEGIN BATCH INSERT INTO app.accounts (id, balance) VALUES ('w2', 2) APPLY BATCH")), "");
  EXPECT_EQ(CodeOf(writer->Query("INSERT INTO app.accounts (id, balance) VALUES ('w', 1) IF NOT EXISTS")), kUnauthorized);
  EXPECT_EQ(CodeOf(writer->Query("DROP TABLE app.accounts")), kUnauthorized);
  EXPECT_EQ(CodeOf(writer->Query("CREATE KEYSPACE mine WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3}")),
            kUnauthorized);

  // LIST PERMISSIONS: a superuser's of anyone, a role's of itself.
  admin->Query("LIST ALL PERMISSIONS OF reader");
  const CqlAnswer listed = DecodeAnswer(admin->answers().back());
  ASSERT_EQ(listed.rows.size(), 1u);
  EXPECT_EQ(listed.columns, (std::vector<std::string>{"role", "username", "resource", "permission"}));
  writer->Query("LIST ALL PERMISSIONS");
  EXPECT_EQ(DecodeAnswer(writer->answers().back()).rows.size(), 1u);
  EXPECT_EQ(CodeOf(writer->Query("LIST ALL PERMISSIONS OF reader")), kUnauthorized);

  // GRANT needs AUTHORIZE on the resource and the permission granted.
  EXPECT_EQ(CodeOf(reader->Query("GRANT SELECT ON TABLE app.accounts TO writer")), kUnauthorized);
  EXPECT_EQ(ErrorOf(admin->Query("GRANT AUTHORIZE ON KEYSPACE app TO reader")), "");
  EXPECT_EQ(ErrorOf(reader->Query("GRANT SELECT ON TABLE app.accounts TO writer")), "");
  EXPECT_EQ(CodeOf(reader->Query("GRANT MODIFY ON TABLE app.accounts TO writer")), kUnauthorized);
  RunFor(cql::Connection::kPermissionsValidity);
  EXPECT_EQ(ErrorOf(writer->Query("INSERT INTO app.accounts (id, balance) VALUES ('w3', 1) IF NOT EXISTS")), "");

  // REVOKE takes it back.
  EXPECT_EQ(ErrorOf(admin->Query("REVOKE SELECT ON KEYSPACE app FROM reader")), "");
  RunFor(cql::Connection::kPermissionsValidity);
  EXPECT_EQ(CodeOf(reader->Query("SELECT * FROM app.accounts")), kUnauthorized);

  // Bad grants are refused clearly.
  EXPECT_EQ(ErrorOf(admin->Query("GRANT SELECT ON TABLE app.nothing TO reader")),
            absl::StrCat(0x2200, ": Resource <table app.nothing> doesn't exist"));
  EXPECT_EQ(ErrorOf(admin->Query("GRANT SELECT ON KEYSPACE app TO ghost")), absl::StrCat(0x2200, ": Role ghost doesn't exist"));
  EXPECT_EQ(CodeOf(admin->Query("GRANT CREATE ON TABLE app.accounts TO reader")), 0x2000);
  EXPECT_EQ(CodeOf(admin->Query("GRANT SELECT ON KEYSPACE system_auth TO reader")), 0x2200);

  // A role dropped and created again starts with no permissions.
  EXPECT_EQ(ErrorOf(admin->Query("DROP ROLE writer")), "");
  EXPECT_EQ(ErrorOf(admin->Query("CREATE ROLE writer WITH PASSWORD = 'pw' AND LOGIN = true")), "");
  admin->Query("LIST ALL PERMISSIONS OF writer");
  EXPECT_EQ(DecodeAnswer(admin->answers().back()).rows.size(), 0u);
}

// CREATE is granted on the parent: ALL KEYSPACES for a keyspace.
TEST_F(CqlAuthSimTest, CreatingAKeyspaceNeedsCreateOnAllKeyspaces) {
  auto admin = LoggedIn("admin", "s3cret");
  EXPECT_EQ(ErrorOf(admin->Query("CREATE ROLE maker WITH PASSWORD = 'pw' AND LOGIN = true")), "");
  EXPECT_EQ(ErrorOf(admin->Query("GRANT CREATE ON ALL KEYSPACES TO maker")), "");
  auto maker = LoggedIn("maker", "pw");
  EXPECT_EQ(ErrorOf(maker->Query("CREATE KEYSPACE made WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3}")),
            "");
  // Its creator holds every permission on it (Cassandra's rule): DROP too.
  EXPECT_EQ(ErrorOf(maker->Query("DROP KEYSPACE made")), "");
}

// A node whose port asks for no password runs no role statement.
TEST(CqlAuthOffSimTest, RoleStatementsNeedAuthOn) {
  Simulator simulator;
  SimBuggify buggify(false, Random(1));
  const LoadedScenario scenario = MustParse(BaseScenario(kSchema));
  Cluster cluster(simulator, scenario, Random(5), buggify);
  cluster.StartAll();
  simulator.RunUntil(500 * kMillisecond);
  SimCqlClient client(simulator, cluster, 1);
  client.Startup();
  EXPECT_EQ(cql::ParseHeader(client.answers().back()).opcode, static_cast<uint8_t>(cql::Opcode::kReady));
  EXPECT_EQ(CodeOf(client.Query("CREATE ROLE alice WITH PASSWORD = 'pw' AND LOGIN = true")), 0x2200);
  EXPECT_NE(client.answers().back().find("asks for no password"), std::string::npos);
}

}  // namespace
}  // namespace charybdis::sim
