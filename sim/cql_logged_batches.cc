#include "sim/cql_logged_batches.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/env/assert.h"

namespace charybdis::sim {

std::string LoggedBatches::CreateTable() const {
  return absl::StrCat("CREATE TABLE ", table_, " (pk int, id int, v text, PRIMARY KEY (pk, id))");
}

std::pair<size_t, std::string> LoggedBatches::Next(Random& random) {
  Batch batch;
  const size_t number = batches_.size();
  const uint64_t rows = 2 + random.Below(2);
  const uint64_t first = random.Below(kPartitions);
  std::vector<std::string> inserts;
  for (uint64_t i = 0; i < rows; i++) {
    // Distinct partitions; ids unique per batch and row, never overwritten.
    const int64_t partition = static_cast<int64_t>((first + i) % kPartitions);
    const int64_t id = static_cast<int64_t>(number * 4 + i);
    batch.rows.emplace_back(partition, id);
    inserts.push_back(absl::StrCat("INSERT INTO ", table_, " (pk, id, v) VALUES (", partition, ", ", id, ", 'b",
                                   number, "')"));
  }
  batches_.push_back(std::move(batch));
  return {number, absl::StrCat("BEGIN BATCH ", absl::StrJoin(inserts, "; "), "; APPLY BATCH")};
}

void LoggedBatches::Record(size_t batch, model::LwtOp::Outcome outcome) {
  CHARYBDIS_ASSERT(batch < batches_.size());
  CHARYBDIS_ASSERT(!batches_[batch].recorded);
  batches_[batch].outcome = outcome;
  batches_[batch].recorded = true;
}

std::string LoggedBatches::ReadBack(uint32_t partition) const {
  CHARYBDIS_ASSERT(partition < kPartitions);
  return absl::StrCat("SELECT id FROM ", table_, " WHERE pk = ", partition);
}

bool LoggedBatches::ReadBackRows(uint32_t partition, const CqlAnswer& answer) {
  if (answer.kind != CqlAnswer::Kind::kRows || answer.paging_state) return false;
  std::set<int64_t> ids;
  for (const auto& row : answer.rows) {
    if (row.size() != 1 || !row[0] || !std::holds_alternative<int64_t>(*row[0])) return false;
    ids.insert(std::get<int64_t>(*row[0]));
  }
  found_[partition] = std::move(ids);
  return true;
}

CheckResult LoggedBatches::Check(const std::string& name) const {
  if (!read_back_done()) return NothingToCheck(name, "the batches' partitions were not read back");
  uint64_t whole = 0, absent = 0, wrong = 0;
  std::string first;
  for (size_t number = 0; number < batches_.size(); number++) {
    const Batch& batch = batches_[number];
    CHARYBDIS_ASSERT(batch.recorded);
    size_t present = 0;
    for (const auto& [partition, id] : batch.rows) present += found_.at(partition).count(id);
    const bool all = present == batch.rows.size();
    whole += all;
    absent += present == 0;
    const bool allowed = batch.outcome == model::LwtOp::Outcome::kOk     ? all
                         : batch.outcome == model::LwtOp::Outcome::kFail ? present == 0
                                                                         : all || present == 0;
    if (!allowed && wrong++ == 0) {
      first = absl::StrCat("batch ", number, " (", batch.outcome == model::LwtOp::Outcome::kOk ? "acknowledged"
                                                   : batch.outcome == model::LwtOp::Outcome::kFail ? "refused"
                                                                                                 : "unknown",
                           ") has ", present, " of its ", batch.rows.size(), " rows");
    }
  }
  if (batches_.empty()) return NothingToCheck(name, "no logged batch was sent");
  CheckResult result{name, wrong == 0,
                     absl::StrCat(batches_.size(), " logged batches: ", whole, " whole, ", absent, " absent")};
  if (wrong > 0) absl::StrAppend(&result.detail, "; ", wrong, " in part or wrongly, e.g. ", first);
  return result;
}

}  // namespace charybdis::sim
