// Known linearizable and known non-linearizable register histories.

#include "sim/linearizability.h"

#include <gtest/gtest.h>

namespace charybdis::sim {
namespace {

using Kind = RegisterOp::Kind;
using Outcome = RegisterOp::Outcome;

class History {
 public:
  // call and return positions given explicitly, to draw overlaps.
  History& Write(uint64_t call, uint64_t ret, std::optional<std::string> value,
                 Outcome outcome = Outcome::kOk, std::string key = "k") {
    return Add({Kind::kWrite, outcome, std::move(key), next_process_++, call, ret, std::move(value), std::nullopt, false});
  }
  History& Read(uint64_t call, uint64_t ret, std::optional<std::string> value, std::string key = "k") {
    return Add({Kind::kRead, Outcome::kOk, std::move(key), next_process_++, call, ret, std::move(value), std::nullopt, false});
  }
  History& Cas(uint64_t call, uint64_t ret, std::optional<std::string> expected, std::string value,
               bool applied, Outcome outcome = Outcome::kOk) {
    RegisterOp op{Kind::kCas, outcome, "k", next_process_++, call, ret, std::move(value), std::nullopt, false};
    op.expected = std::move(expected);
    op.applied = applied;
    return Add(op);
  }
  bool Linearizable() const {
    const LinearizabilityResult result = CheckLinearizable(ops_);
    EXPECT_FALSE(result.exhausted);
    return result.linearizable;
  }
  const std::vector<RegisterOp>& ops() const { return ops_; }

 private:
  History& Add(RegisterOp op) {
    ops_.push_back(std::move(op));
    return *this;
  }
  uint64_t next_process_ = 0;
  std::vector<RegisterOp> ops_;
};

TEST(LinearizabilityTest, SequentialHistories) {
  EXPECT_TRUE(History().Read(1, 2, std::nullopt).Write(3, 4, "a").Read(5, 6, "a").Linearizable());
  EXPECT_FALSE(History().Write(1, 2, "a").Read(3, 4, std::nullopt).Linearizable());
  EXPECT_FALSE(History().Read(1, 2, "never written").Linearizable());
  EXPECT_TRUE(History().Write(1, 2, "a").Write(3, 4, std::nullopt).Read(5, 6, std::nullopt).Linearizable());
}

TEST(LinearizabilityTest, ConcurrentReadMaySeeEitherSide) {
  // w(a) [1,10] overlaps both reads.
  EXPECT_TRUE(History().Write(1, 10, "a").Read(2, 3, std::nullopt).Read(4, 5, "a").Linearizable());
  // ...but once a read saw the new value, a later read cannot see the old.
  EXPECT_FALSE(History().Write(1, 10, "a").Read(2, 3, "a").Read(4, 5, std::nullopt).Linearizable());
}

TEST(LinearizabilityTest, StaleReadAfterAcknowledgedWrite) {
  EXPECT_FALSE(History().Write(1, 2, "a").Write(3, 4, "b").Read(5, 6, "a").Linearizable());
  // The same read overlapping the second write is fine.
  EXPECT_TRUE(History().Write(1, 2, "a").Write(3, 6, "b").Read(5, 7, "a").Linearizable());
}

TEST(LinearizabilityTest, CompareAndSet) {
  // Two concurrent IF NOT EXISTS: exactly one may apply.
  EXPECT_TRUE(History().Cas(1, 5, std::nullopt, "a", true).Cas(2, 6, std::nullopt, "b", false)
                  .Read(7, 8, "a").Linearizable());
  EXPECT_FALSE(History().Cas(1, 5, std::nullopt, "a", true).Cas(2, 6, std::nullopt, "b", true)
                   .Linearizable());
  // A failed condition must have seen something else.
  EXPECT_FALSE(History().Cas(1, 2, std::nullopt, "a", false).Linearizable());
  EXPECT_TRUE(History().Write(1, 2, "x").Cas(3, 4, "x", "y", true).Cas(5, 6, "x", "z", false)
                  .Read(7, 8, "y").Linearizable());
}

TEST(LinearizabilityTest, UnknownOutcomesMayOrMayNotHaveHappened) {
  // An info write nobody observed: fine either way.
  EXPECT_TRUE(History().Write(1, 0, "a", Outcome::kInfo).Read(5, 6, std::nullopt).Linearizable());
  // Observed later: it took effect after its call.
  EXPECT_TRUE(History().Write(1, 0, "a", Outcome::kInfo).Read(5, 6, "a").Linearizable());
  // It cannot take effect before it was called...
  EXPECT_FALSE(History().Read(1, 2, "a").Write(3, 0, "a", Outcome::kInfo).Linearizable());
  // ...nor be undone once seen.
  EXPECT_FALSE(History().Write(1, 0, "a", Outcome::kInfo).Read(5, 6, "a").Read(7, 8, std::nullopt)
                   .Linearizable());
  // An info cas applies only if its condition held when it took effect.
  EXPECT_FALSE(History().Write(1, 2, "x").Cas(3, 0, "y", "z", false, Outcome::kInfo).Read(5, 6, "z")
                   .Linearizable());
  EXPECT_TRUE(History().Write(1, 2, "x").Cas(3, 0, "x", "z", false, Outcome::kInfo).Read(5, 6, "z")
                  .Linearizable());
}

TEST(LinearizabilityTest, FailedOperationsHadNoEffect) {
  EXPECT_FALSE(History().Write(1, 2, "a", Outcome::kFail).Read(3, 4, "a").Linearizable());
}

TEST(LinearizabilityTest, KeysAreCheckedIndependently) {
  History history;
  history.Write(1, 2, "a", Outcome::kOk, "x").Write(1, 2, "b", Outcome::kOk, "y");
  history.Read(3, 4, "a", "x").Read(3, 4, "b", "y");
  const LinearizabilityResult ok = CheckLinearizable(history.ops());
  EXPECT_TRUE(ok.linearizable);
  EXPECT_EQ(ok.keys, 2u);
  history.Read(5, 6, "a", "y");
  const LinearizabilityResult bad = CheckLinearizable(history.ops());
  EXPECT_FALSE(bad.linearizable);
  EXPECT_NE(bad.detail.find("key y"), std::string::npos) << bad.detail;
}

TEST(LinearizabilityTest, ManyConcurrentClientsStayTractable) {
  // 16 processes in lock-step rounds of read + cas on one key, one winner
  // per round: a few thousand operations, checked with memoization.
  History history;
  std::optional<std::string> current;
  uint64_t time = 1;
  for (int round = 0; round < 100; round++) {
    const std::string next = "v" + std::to_string(round);
    for (int p = 0; p < 16; p++) history.Read(time, time + 2, current);
    time += 3;
    for (int p = 0; p < 16; p++) history.Cas(time, time + 2, current, next + "-" + std::to_string(p), p == 0);
    current = next + "-0";
    time += 3;
  }
  const LinearizabilityResult result = CheckLinearizable(history.ops());
  EXPECT_TRUE(result.linearizable) << result.detail;
  EXPECT_EQ(result.operations, 3200u);
}

}  // namespace
}  // namespace charybdis::sim
