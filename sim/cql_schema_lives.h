#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/env/time.h"
#include "sim/cql_frames.h"
#include "sim/workload.h"

namespace charybdis::sim {

// The CQL workload's schema client (spec alter_table_every_ms): the lives
// of a column, or of a table. Each life makes the thing (ALTER TABLE ADD,
// or CREATE TABLE), reads it on one row (it must be empty: nothing was
// written in this life yet), writes the life's number there, and drops it.
// Two names take turns, so from the third life on each one brings back a
// dropped name, and a read that finds an earlier life's value has seen a
// dropped column's or table's data come back (docs/cql.md).
class SchemaLives {
 public:
  // A column of `table`, read and written at `row` (" WHERE ..." naming a
  // row no other client writes).
  static SchemaLives OfColumn(std::string table, std::string row);
  // A table of `keyspace` (pk int PRIMARY KEY, v int), read and written
  // at pk 0.
  static SchemaLives OfTable(std::string keyspace);

  // The statement of the step at hand.
  std::string Statement() const;
  // How long the workload waits before sending it: `every` before a life
  // begins; its read, write and drop follow closely, so that a short run
  // still brings names back.
  Nanos Before(Nanos every) const;
  // The step's answer (null: none came in time); moves on to the next
  // step. Returns the outcome's name, for the workload's counts.
  std::string OnAnswer(const CqlAnswer* answer);
  // Whether the last answer ended a life (or none was sent yet).
  bool BetweenLives() const { return step_ == Step::kMake; }
  CheckResult Check(const std::string& name) const;

 private:
  enum class Kind { kColumn, kTable };
  enum class Step { kMake, kRead, kWrite, kDrop };
  SchemaLives(Kind kind, std::string table_or_keyspace, std::string row)
      : kind_(kind), where_(std::move(table_or_keyspace)), row_(std::move(row)) {}
  // The column's name, or the table's qualified one.
  std::string Name() const;
  // Judges a read of the column or table in this life.
  void Judge(const CqlAnswer& answer);

  const Kind kind_;
  const std::string where_;  // kColumn: its table; kTable: its keyspace
  const std::string row_;
  Step step_ = Step::kMake;
  uint32_t life_ = 0;
  uint64_t reads_ = 0;
  uint64_t reads_made_again_ = 0;
  std::vector<std::string> came_back_;  // the reads that found an earlier life's value
};

}  // namespace charybdis::sim
