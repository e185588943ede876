// A request for a table a shard does not know yet waits for the shard's
// schema (core/coordinator/held_for_schema.h): it runs once a schema update
// makes the table known, or when its wait runs out, and not before.

#include "core/coordinator/held_for_schema.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tests/fake_env.h"

namespace charybdis {
namespace {

Envelope ReadOf(const std::string& table, uint64_t request_id) {
  Envelope message;
  message.mutable_client_request()->set_request_id(request_id);
  message.mutable_client_request()->mutable_read()->set_table(table);
  return message;
}

class HeldForSchemaTest : public ::testing::Test {
 protected:
  HeldForSchemaTest() : fake_(Address{1, 1}) {
    fake_.env.probes = &probes_;
    held_ = std::make_unique<HeldForSchema>(fake_.env, [this](const Envelope& message) {
      dispatched_.push_back(message.client_request().request_id());
    });
  }

  bool Knows(const ClientRequest& request) const { return known_.count(request.read().table()) > 0; }
  void SchemaUpdate() {
    held_->ReleaseKnown([this](const ClientRequest& request) { return Knows(request); });
  }

  testing::FakeEnv fake_;
  testing::CountingProbes probes_;
  std::unique_ptr<HeldForSchema> held_;
  std::set<std::string> known_;
  std::vector<uint64_t> dispatched_;
};

TEST_F(HeldForSchemaTest, ARequestRunsOnceAnUpdateMakesItsTableKnown) {
  held_->Hold(ReadOf("ks.t@2", 7));
  held_->Hold(ReadOf("ks.u@3", 8));
  EXPECT_EQ(probes_.reached["schema.shard_behind_node"], 2);
  EXPECT_TRUE(dispatched_.empty());
  known_.insert("ks.t@2");
  SchemaUpdate();
  EXPECT_EQ(dispatched_, (std::vector<uint64_t>{7}));
  EXPECT_EQ(held_->size(), 1u);
  // Its timer finds it gone and runs nothing twice.
  fake_.clock.Advance(HeldForSchema::kWait);
  EXPECT_EQ(dispatched_, (std::vector<uint64_t>{7, 8}));
  EXPECT_EQ(held_->size(), 0u);
}

TEST_F(HeldForSchemaTest, ARequestWhoseTableNeverComesRunsWhenItsWaitRunsOut) {
  held_->Hold(ReadOf("ks.gone@1", 9));
  fake_.clock.Advance(HeldForSchema::kWait - 1);
  SchemaUpdate();
  EXPECT_TRUE(dispatched_.empty());
  fake_.clock.Advance(1);
  EXPECT_EQ(dispatched_, (std::vector<uint64_t>{9}));
  fake_.clock.Advance(10 * HeldForSchema::kWait);
  EXPECT_EQ(dispatched_.size(), 1u);
}

}  // namespace
}  // namespace charybdis
