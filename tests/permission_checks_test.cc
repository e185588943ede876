// What a request of the gRPC client API needs of its role's permissions
// (core/cql/permission_checks.h; docs/security.md, "The gRPC client API"):
// as the CQL statement doing the same would, a config table's on ALL
// KEYSPACES, and the node-wide operations a superuser.
#include "core/cql/permission_checks.h"

#include "gtest/gtest.h"

namespace charybdis::cql {
namespace {

using auth::Needed;
using auth::Permission;

const std::string kAccounts = auth::TableResource("app", "accounts");

TEST(NeededForRequestTest, ReadsNeedSelectWritesModifyAndConditionalWritesBoth) {
  ClientRequest write;
  write.mutable_write()->set_table("app.accounts");
  EXPECT_EQ(NeededForRequest(write), (std::vector<Needed>{{Permission::kModify, kAccounts}}));
  ClientRequest read;
  read.mutable_read()->set_table("app.accounts");
  EXPECT_EQ(NeededForRequest(read), (std::vector<Needed>{{Permission::kSelect, kAccounts}}));
  ClientRequest scan;
  scan.mutable_scan()->set_table("app.accounts");
  EXPECT_EQ(NeededForRequest(scan), (std::vector<Needed>{{Permission::kSelect, kAccounts}}));
  ClientRequest cas;
  cas.mutable_cas()->add_statement()->mutable_write()->set_table("app.accounts");
  EXPECT_EQ(NeededForRequest(cas),
            (std::vector<Needed>{{Permission::kSelect, kAccounts}, {Permission::kModify, kAccounts}}));
  ClientRequest batch;
  batch.mutable_batch()->add_write()->set_table("app.accounts");
  batch.mutable_batch()->add_write()->set_table("app.ledger");
  EXPECT_EQ(NeededForRequest(batch), (std::vector<Needed>{{Permission::kModify, kAccounts},
                                                          {Permission::kModify, auth::TableResource("app", "ledger")}}));
}

TEST(NeededForRequestTest, AConfigTableBelongsToNoKeyspaceAndNeedsAllKeyspaces) {
  ClientRequest write;
  write.mutable_write()->set_table("kv");
  EXPECT_EQ(NeededForRequest(write), (std::vector<Needed>{{Permission::kModify, auth::AllKeyspacesResource()}}));
}

TEST(NeededForRequestTest, SchemaChangesNeedWhatTheirStatementNeeds) {
  ClientRequest create;
  create.mutable_schema_change()->set_keyspace("app");
  create.mutable_schema_change()->set_statement("CREATE TABLE t (k int PRIMARY KEY, v int)");
  EXPECT_EQ(NeededForRequest(create), (std::vector<Needed>{{Permission::kCreate, auth::KeyspaceResource("app")}}));
  ClientRequest drop;
  drop.mutable_schema_change()->set_statement("DROP KEYSPACE app");
  EXPECT_EQ(NeededForRequest(drop), (std::vector<Needed>{{Permission::kDrop, auth::KeyspaceResource("app")}}));
  ClientRequest garbage;
  garbage.mutable_schema_change()->set_statement("DROP EVERYTHING");
  EXPECT_EQ(NeededForRequest(garbage), std::nullopt);
}

TEST(NeededForRequestTest, NodeWideOperationsAreASuperusers) {
  ClientRequest repair;
  repair.mutable_repair()->set_keyspace("app");
  EXPECT_EQ(NeededForRequest(repair), std::nullopt);
  ClientRequest compact;
  compact.mutable_compact();
  EXPECT_EQ(NeededForRequest(compact), std::nullopt);
  ClientRequest cleanup;
  cleanup.mutable_cleanup();
  EXPECT_EQ(NeededForRequest(cleanup), std::nullopt);
  ClientRequest topology;
  topology.mutable_topology_change();
  EXPECT_EQ(NeededForRequest(topology), std::nullopt);
}

}  // namespace
}  // namespace charybdis::cql
