// The gRPC client API's credentials and permissions (node/server/
// client_api_auth.h) over a simulated cluster, through core/cql's backend
// as the CQL server runs them: a schema change made through the API gives
// its creator what a CQL CREATE gives, and a DROP takes the grants along,
// with the permissions remembered before read again.

#include "node/server/client_api_auth.h"

#include <gtest/gtest.h>

#include "core/auth/permissions.h"
#include "sim/cql_backend.h"
#include "tests/auth_sim_test_base.h"
#include "tests/sim_cql_client.h"

namespace charybdis::sim {
namespace {

using testing::BaseScenario;

class ClientApiAuthSimTest : public AuthSimTestBase {
 protected:
  ClientApiAuthSimTest()
      : AuthSimTestBase(BaseScenario()),
        backend_(cluster_, cluster_.AddClient(0), 1, &probes_, 1 << 20, &auth_),
        api_auth_(backend_) {
    Start();
    // alice may create keyspaces, and nothing else.
    admin_ = std::make_unique<SimCqlClient>(simulator_, cluster_, 1, &auth_, "10.0.0.1");
    admin_->Startup();
    admin_->Send(cql::Opcode::kAuthResponse, AuthResponseBody("admin", "s3cret"));
    for (const char* statement : {"CREATE ROLE alice WITH PASSWORD = 'pw' AND LOGIN = true",
                                  "GRANT CREATE ON ALL KEYSPACES TO alice"}) {
      admin_->Query(statement);
      EXPECT_EQ(cql::ParseHeader(admin_->answers().back()).opcode, static_cast<uint8_t>(cql::Opcode::kResult))
          << statement;
    }
  }

  // The check of a call of alice's: "" when it may run, else the refusal.
  std::string Check(node::CallNeeds needs) {
    std::optional<grpc::Status> status;
    api_auth_.Check("10.0.0.2", auth::Credentials{"alice", "pw"}, std::move(needs),
                    [&status](grpc::Status answer) { status = answer; });
    for (int i = 0; i < 1000 && !status; i++) RunFor(10 * kMillisecond);
    EXPECT_TRUE(status.has_value()) << "no answer";
    return !status || status->ok() ? "" : status->error_message();
  }

  // A schema change of `role`'s, as ClientService runs one: executed, and
  // its grants followed once it was answered.
  ClientResponse ChangeSchema(const std::string& role, const std::string& statement) {
    ClientRequest request;
    request.mutable_schema_change()->set_statement(statement);
    std::optional<ClientResponse> response;
    backend_.Execute(request, [&response](ClientResponse answer) { response = answer; });
    for (int i = 0; i < 1000 && !response; i++) RunFor(10 * kMillisecond);
    EXPECT_TRUE(response && response->code() == ClientResponse::OK) << statement;
    if (!response) return ClientResponse();
    std::optional<bool> written;
    api_auth_.FollowSchemaChange(role, request, *response, [&written](bool ok) { written = ok; });
    for (int i = 0; i < 1000 && !written; i++) RunFor(10 * kMillisecond);
    EXPECT_EQ(written, std::optional<bool>(true)) << statement;
    return *response;
  }

  static node::CallNeeds ToSelect(const std::string& keyspace) {
    return std::vector<auth::Needed>{{auth::Permission::kSelect, auth::TableResource(keyspace, "t")}};
  }

  ::charybdis::testing::CountingProbes probes_;
  SimCqlBackend backend_;
  node::ClientApiAuth api_auth_;
  std::unique_ptr<SimCqlClient> admin_;
};

constexpr char kCreateShop[] =
    "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}";

TEST_F(ClientApiAuthSimTest, TheCreatorOfAKeyspaceThroughTheApiMayUseIt) {
  EXPECT_EQ(Check(std::vector<auth::Needed>{{auth::Permission::kCreate, auth::AllKeyspacesResource()}}), "");
  // Remembered for 2 s from here: the grant below must replace it.
  EXPECT_EQ(Check(ToSelect("shop")), "User alice has no SELECT permission on <table shop.t> or any of its parents");
  EXPECT_NE(ChangeSchema("alice", kCreateShop).schema_sequence(), 0u);
  EXPECT_EQ(Check(ToSelect("shop")), "");
  EXPECT_EQ(Check(std::vector<auth::Needed>{{auth::Permission::kDrop, auth::KeyspaceResource("shop")}}), "");
}

TEST_F(ClientApiAuthSimTest, ADropThroughTheApiTakesTheGrantsAlong) {
  ChangeSchema("alice", kCreateShop);
  EXPECT_EQ(Check(ToSelect("shop")), "");
  ChangeSchema("admin", "DROP KEYSPACE shop");
  // A keyspace made again under the name starts with no grants of alice's.
  ChangeSchema("admin", kCreateShop);
  EXPECT_EQ(Check(ToSelect("shop")), "User alice has no SELECT permission on <table shop.t> or any of its parents");
}

// An IF NOT EXISTS of what exists changed nothing: it is answered without
// a sequence, and grants nothing to whoever sent it.
TEST_F(ClientApiAuthSimTest, ACreateThatFoundItsKeyspaceGrantsNothing) {
  ChangeSchema("admin", kCreateShop);
  const ClientResponse again = ChangeSchema(
      "alice", "CREATE KEYSPACE IF NOT EXISTS shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}");
  EXPECT_EQ(again.schema_sequence(), 0u);
  EXPECT_EQ(Check(ToSelect("shop")), "User alice has no SELECT permission on <table shop.t> or any of its parents");
}

}  // namespace
}  // namespace charybdis::sim
