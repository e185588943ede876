#include "sim/cql_column_lives.h"

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"

namespace charybdis::sim {

std::string ColumnLives::Column() const { return absl::StrCat("x", life_ % 2); }

std::string ColumnLives::Statement() const {
  switch (step_) {
    case Step::kAdd: return absl::StrCat("ALTER TABLE ", table_, " ADD ", Column(), " int");
    case Step::kRead: return absl::StrCat("SELECT ", Column(), " FROM ", table_, row_);
    case Step::kWrite: return absl::StrCat("UPDATE ", table_, " SET ", Column(), " = ", life_, row_);
    case Step::kDrop: break;
  }
  CHARYBDIS_ASSERT(step_ == Step::kDrop);
  return absl::StrCat("ALTER TABLE ", table_, " DROP ", Column());
}

Nanos ColumnLives::Before(Nanos every) const {
  return step_ == Step::kAdd ? every : 50 * kMillisecond;
}

std::string ColumnLives::OnAnswer(const CqlAnswer* answer) {
  const bool ok = answer != nullptr && answer->kind != CqlAnswer::Kind::kError;
  const std::string outcome = absl::StrCat(
      step_ == Step::kAdd ? "alter add " : step_ == Step::kRead ? "alter read " : step_ == Step::kWrite ? "alter write " : "alter drop ",
      answer == nullptr ? "unknown" : ok ? "ok" : "failed");
  switch (step_) {
    case Step::kAdd:
      // A column whose ADD did not take (or is unknown) is dropped at once:
      // only a life that surely began is read.
      step_ = ok ? Step::kRead : Step::kDrop;
      break;
    case Step::kRead:
      if (ok) Judge(*answer);
      step_ = Step::kWrite;
      break;
    case Step::kWrite:
      step_ = Step::kDrop;
      break;
    case Step::kDrop:
      life_++;
      step_ = Step::kAdd;
      break;
  }
  return outcome;
}

void ColumnLives::Judge(const CqlAnswer& answer) {
  if (answer.kind != CqlAnswer::Kind::kRows) return;  // a prepared or other answer: nothing read
  reads_++;
  if (life_ >= 2) reads_added_again_++;
  // No row (only the column's cells ever made it), or the row with the
  // column empty: nothing of this life was written yet.
  for (const auto& row : answer.rows) {
    if (row.empty() || !row[0].has_value()) continue;
    const model::Value& value = *row[0];
    came_back_.push_back(absl::StrCat(Column(), " in life ", life_, " read ", CqlLiteral(value), " of an earlier life"));
  }
}

CheckResult ColumnLives::Check(const std::string& name) const {
  CheckResult result{name, came_back_.empty(),
                     absl::StrCat(reads_, " reads of a new column's life, ", reads_added_again_, " of a name added again")};
  if (!came_back_.empty()) absl::StrAppend(&result.detail, "; ", came_back_.size(), " found old values, the first: ", came_back_[0]);
  return result;
}

}  // namespace charybdis::sim
