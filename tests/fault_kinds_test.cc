// The fault kind descriptors (core/workload/fault_kinds.h) against the
// scenario schema they describe, so that a new kind of fault in
// scenario.proto cannot be left undescribed.

#include "core/workload/fault_kinds.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace charybdis {
namespace {

using google::protobuf::FieldDescriptor;

TEST(FaultKindsTest, OneDescriptorPerFaultActionKindNamedAsItsField) {
  const auto* oneof = scenario::FaultAction::descriptor()->FindOneofByName("kind");
  ASSERT_NE(oneof, nullptr);
  EXPECT_EQ(FaultKinds().size(), static_cast<size_t>(oneof->field_count()));
  for (int i = 0; i < oneof->field_count(); i++) {
    const FieldDescriptor* field = oneof->field(i);
    const FaultKind& kind = FaultKindOf(static_cast<scenario::FaultAction::KindCase>(field->number()));
    EXPECT_EQ(kind.name, field->name());
    const bool lasts = field->message_type()->FindFieldByName("duration_ms") != nullptr;
    EXPECT_EQ(kind.duration_ms != nullptr, lasts) << field->name();
    EXPECT_EQ(kind.set_duration_ms != nullptr, lasts) << field->name();
    if (!lasts) continue;
    scenario::FaultAction action;
    kind.set_duration_ms(action, 1234);
    EXPECT_EQ(action.kind_case(), kind.kind);
    EXPECT_EQ(kind.duration_ms(action), 1234u);
  }
}

TEST(FaultKindsTest, EveryRandomRateBelongsToOneKindAndReadsItsField) {
  // Give every rate a value of its own, then read each back through its kind.
  scenario::RandomFaults faults;
  const auto* descriptor = scenario::RandomFaults::descriptor();
  const auto* reflection = faults.GetReflection();
  std::set<std::string> rates;
  for (int i = 0; i < descriptor->field_count(); i++) {
    const FieldDescriptor* field = descriptor->field(i);
    const std::string& name = field->name();
    if (name.size() < 11 || name.compare(name.size() - 11, 11, "_per_minute") != 0) continue;
    rates.insert(name);
    reflection->SetDouble(&faults, field, field->number());
  }
  std::set<std::string> described;
  for (const FaultKind& kind : FaultKinds()) {
    EXPECT_EQ(kind.random_rate == nullptr, kind.random_rate_field == nullptr) << kind.name;
    EXPECT_EQ(kind.random_rate == nullptr, kind.random_duration_field == nullptr) << kind.name;
    if (kind.random_rate == nullptr) continue;
    const FieldDescriptor* rate = descriptor->FindFieldByName(kind.random_rate_field);
    ASSERT_NE(rate, nullptr) << kind.random_rate_field;
    EXPECT_EQ(kind.random_rate(faults), rate->number()) << kind.name;
    EXPECT_NE(descriptor->FindFieldByName(kind.random_duration_field), nullptr) << kind.random_duration_field;
    EXPECT_TRUE(described.insert(kind.random_rate_field).second) << "two kinds draw from " << kind.random_rate_field;
  }
  EXPECT_EQ(described, rates);
}

TEST(FaultKindsTest, RealNodesCanKillStartCutHealAndPause) {
  std::set<std::string> real;
  for (const FaultKind& kind : FaultKinds()) {
    if (kind.on_real_nodes) real.insert(kind.name);
  }
  EXPECT_EQ(real, (std::set<std::string>{"crash", "restart", "partition", "heal", "pause"}));
}

}  // namespace
}  // namespace charybdis
