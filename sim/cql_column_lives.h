#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/env/time.h"
#include "sim/cql_frames.h"
#include "sim/workload.h"

namespace charybdis::sim {

// The CQL workload's schema client (spec alter_table_every_ms): the lives
// of a column. Each life ADDs the column, reads it on one row (it must be
// empty: nothing was written in this life yet), writes the life's number
// there, and DROPs it. Two names take turns, so from the third life on
// each ADD brings back a dropped name, and a read that finds an earlier
// life's value has seen a dropped column's data come back (docs/cql.md).
class ColumnLives {
 public:
  // `row`: " WHERE ..." naming a row no other client writes.
  ColumnLives(std::string table, std::string row) : table_(std::move(table)), row_(std::move(row)) {}

  // The statement of the step at hand.
  std::string Statement() const;
  // How long the workload waits before sending it: `every` before an
  // ADD; a life's read, write and DROP follow closely, so that a short
  // run still brings names back.
  Nanos Before(Nanos every) const;
  // The step's answer (null: none came in time); moves on to the next
  // step. Returns the outcome's name, for the workload's counts.
  std::string OnAnswer(const CqlAnswer* answer);
  CheckResult Check(const std::string& name) const;

 private:
  enum class Step { kAdd, kRead, kWrite, kDrop };
  std::string Column() const;
  // Judges a read of the column in this life.
  void Judge(const CqlAnswer& answer);

  const std::string table_;
  const std::string row_;
  Step step_ = Step::kAdd;
  uint32_t life_ = 0;
  uint64_t reads_ = 0;
  uint64_t reads_added_again_ = 0;
  std::vector<std::string> came_back_;  // the reads that found an earlier life's value
};

}  // namespace charybdis::sim
