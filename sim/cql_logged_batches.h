#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/env/random.h"
#include "sim/cql_frames.h"
#include "sim/model/lwt_check.h"
#include "sim/workload.h"

namespace charybdis::sim {

// The CQL workload's logged batches (docs/scenarios.md "The CQL
// workload"): each writes fresh rows to two or three partitions of a table
// of its own, so it goes through the batch log. Once the workload is done
// every partition is read back, and each batch must be there whole or not
// at all: whole if acknowledged, not at all if refused (Unavailable), either
// if its outcome is unknown. Never in part.
class LoggedBatches {
 public:
  static constexpr uint32_t kPartitions = 4;

  explicit LoggedBatches(std::string table) : table_(std::move(table)) {}

  std::string CreateTable() const;
  // A new batch: its number (for Record) and its CQL.
  std::pair<size_t, std::string> Next(Random& random);
  void Record(size_t batch, model::LwtOp::Outcome outcome);

  // Reading back, once every batch is recorded: the SELECT of partition
  // `partition`, and what it returned (false if not a readable answer).
  std::string ReadBack(uint32_t partition) const;
  bool ReadBackRows(uint32_t partition, const CqlAnswer& answer);
  bool read_back_done() const { return found_.size() == kPartitions; }

  bool empty() const { return batches_.empty(); }
  CheckResult Check(const std::string& name) const;

 private:
  struct Batch {
    std::vector<std::pair<int64_t, int64_t>> rows;  // (partition, id)
    model::LwtOp::Outcome outcome = model::LwtOp::Outcome::kInfo;
    bool recorded = false;
  };

  const std::string table_;
  std::vector<Batch> batches_;
  std::map<int64_t, std::set<int64_t>> found_;  // partition -> ids read back
};

}  // namespace charybdis::sim
