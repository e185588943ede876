#include "sim/cql_schema_lives.h"

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"

namespace charybdis::sim {

SchemaLives SchemaLives::OfColumn(std::string table, std::string row) {
  return SchemaLives(Kind::kColumn, std::move(table), std::move(row));
}

SchemaLives SchemaLives::OfTable(std::string keyspace) {
  return SchemaLives(Kind::kTable, std::move(keyspace), " WHERE pk = 0");
}

std::string SchemaLives::Name() const {
  return kind_ == Kind::kColumn ? absl::StrCat("x", life_ % 2) : absl::StrCat(where_, ".l", life_ % 2);
}

std::string SchemaLives::Statement() const {
  const std::string name = Name();
  const std::string table = kind_ == Kind::kColumn ? where_ : name;
  const std::string column = kind_ == Kind::kColumn ? name : "v";
  switch (step_) {
    case Step::kMake:
      return kind_ == Kind::kColumn ? absl::StrCat("ALTER TABLE ", table, " ADD ", column, " int")
                                    : absl::StrCat("CREATE TABLE ", table, " (pk int PRIMARY KEY, v int)");
    case Step::kRead: return absl::StrCat("SELECT ", column, " FROM ", table, row_);
    case Step::kWrite: return absl::StrCat("UPDATE ", table, " SET ", column, " = ", life_, row_);
    case Step::kDrop: break;
  }
  CHARYBDIS_ASSERT(step_ == Step::kDrop);
  return kind_ == Kind::kColumn ? absl::StrCat("ALTER TABLE ", table, " DROP ", column)
                                : absl::StrCat("DROP TABLE ", table);
}

Nanos SchemaLives::Before(Nanos every) const {
  return step_ == Step::kMake ? every : 50 * kMillisecond;
}

std::string SchemaLives::OnAnswer(const CqlAnswer* answer) {
  const bool ok = answer != nullptr && answer->kind != CqlAnswer::Kind::kError;
  static constexpr const char* kSteps[2][4] = {{"alter add ", "alter read ", "alter write ", "alter drop "},
                                               {"table create ", "table read ", "table write ", "table drop "}};
  const std::string outcome = absl::StrCat(kSteps[kind_ == Kind::kTable][static_cast<int>(step_)],
                                           answer == nullptr ? "unknown" : ok ? "ok" : "failed");
  switch (step_) {
    case Step::kMake:
      // One whose making did not take (or is unknown) is dropped at once:
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
      step_ = Step::kMake;
      break;
  }
  return outcome;
}

void SchemaLives::Judge(const CqlAnswer& answer) {
  if (answer.kind != CqlAnswer::Kind::kRows) return;  // a prepared or other answer: nothing read
  reads_++;
  if (life_ >= 2) reads_made_again_++;
  // No row (only the column's cells ever made it), or the row with the
  // column empty: nothing of this life was written yet.
  for (const auto& row : answer.rows) {
    if (row.empty() || !row[0].has_value()) continue;
    const model::Value& value = *row[0];
    came_back_.push_back(absl::StrCat(Name(), " in life ", life_, " read ", CqlLiteral(value), " of an earlier life"));
  }
}

CheckResult SchemaLives::Check(const std::string& name) const {
  const char* what = kind_ == Kind::kColumn ? "column" : "table";
  CheckResult result{name, came_back_.empty(),
                     absl::StrCat(reads_, " reads of a new ", what, "'s life, ", reads_made_again_, " of a name made again")};
  if (!came_back_.empty()) absl::StrAppend(&result.detail, "; ", came_back_.size(), " found old values, the first: ", came_back_[0]);
  return result;
}

}  // namespace charybdis::sim
