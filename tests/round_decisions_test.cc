// What one Paxos round writes and answers when several conditional writes
// of a partition share it (core/paxos/round_decisions.h), for collections:
// a later operation's set-whole or deletion outdoes an earlier one's
// elements, a deletion does not take a later operation's additions, and
// what the partition already holds shadows what the round adds.

#include "core/paxos/round_decisions.h"

#include <gtest/gtest.h>

#include "core/data/cell.h"
#include "core/request/result_rows.h"

namespace charybdis {
namespace {

constexpr Timestamp kBallotMicros = 1000;
constexpr Timestamp kNow = 2000;

Ballot BallotAt(Timestamp micros) {
  Ballot ballot;
  ballot.set_micros(micros);
  ballot.set_unique(7);
  return ballot;
}

// A write of row "r" with no condition: elements added, the set whole
// (`whole`: its elements), or the set deleted.
CasOp SetOp(std::vector<std::string> added, bool whole = false, bool deleted = false,
            std::vector<std::string> condition_elements = {}, bool conditioned = false) {
  CasOp op;
  CasStatement* statement = op.add_statement();
  WriteOp* write = statement->mutable_write();
  write->set_clustering_key("r");
  if (whole) write->add_clear_collection("s");
  if (deleted) write->add_delete_column("s");
  for (const std::string& element : added) write->add_put()->set_column(ElementCellName("s", element));
  if (conditioned) {
    Condition* condition = statement->add_condition();
    condition->set_column("s");
    condition->set_compared(Condition::ELEMENTS);
    std::vector<std::pair<std::string, std::string>> elements;
    for (const std::string& element : condition_elements) elements.emplace_back(element, "");
    condition->set_value(ElementsForm(elements, true));
  }
  return op;
}

// The live elements of s in a mutation written over `current`.
std::vector<std::string> ElementsAfter(const Partition& current, const Partition& mutation) {
  Partition after = current;
  after.Merge(mutation);
  after.Compact();
  std::vector<std::string> elements;
  for (const auto& [name, cell] : after.rows["r"].cells) {
    if (IsElementCell(name) && cell.LiveAt(kNow)) elements.push_back(PathOfCell(name));
  }
  return elements;
}

TEST(RoundDecisionsTest, ALaterSetWholeOrDeletionOutdoesAnEarlierOperationsElements) {
  const Partition empty;
  BatchEvaluation replaced = EvaluateBatch({SetOp({"1"}), SetOp({"5"}, /*whole=*/true)}, empty, BallotAt(kBallotMicros), kNow, CL_SERIAL);
  EXPECT_EQ(ElementsAfter(empty, replaced.mutation), (std::vector<std::string>{"5"}));
  BatchEvaluation deleted = EvaluateBatch({SetOp({"1"}), SetOp({}, false, /*deleted=*/true)}, empty, BallotAt(kBallotMicros), kNow, CL_SERIAL);
  EXPECT_EQ(ElementsAfter(empty, deleted.mutation), (std::vector<std::string>{}));
  // A deletion, then an addition: the addition stays.
  BatchEvaluation added = EvaluateBatch({SetOp({}, false, true), SetOp({"1"})}, empty, BallotAt(kBallotMicros), kNow, CL_SERIAL);
  EXPECT_EQ(ElementsAfter(empty, added.mutation), (std::vector<std::string>{"1"}));
  // Each operation's conditions see what the ones before it left.
  BatchEvaluation seen = EvaluateBatch({SetOp({"1"}), SetOp({"5"}, true), SetOp({"9"}, false, false, {"5"}, true)}, empty,
                                       BallotAt(kBallotMicros), kNow, CL_SERIAL);
  ASSERT_EQ(seen.answers.size(), 3u);
  EXPECT_TRUE(seen.answers[2].applied());
  EXPECT_EQ(ElementsAfter(empty, seen.mutation), (std::vector<std::string>{"5", "9"}));
}

TEST(RoundDecisionsTest, ANewerCollectionTombstoneShadowsWhatTheRoundAdds) {
  // A plain DELETE s stamped ahead of the ballot's clock.
  Partition current;
  current.rows["r"].cells["s"] = Cell{kBallotMicros + 500, true, "", 0, 0};
  BatchEvaluation evaluation = EvaluateBatch({SetOp({"1"}), SetOp({"2"}, false, false, {"1"}, true)}, current,
                                             BallotAt(kBallotMicros), kNow, CL_SERIAL);
  ASSERT_EQ(evaluation.answers.size(), 2u);
  EXPECT_TRUE(evaluation.answers[0].applied());
  EXPECT_FALSE(evaluation.answers[1].applied());  // a reader never sees element 1
  EXPECT_EQ(ElementsAfter(current, evaluation.mutation), (std::vector<std::string>{}));
}

}  // namespace
}  // namespace charybdis
