#include "sim/model/lwt_check.h"

#include <map>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "sim/linearization_search.h"

namespace charybdis::sim::model {

namespace {

// A partition, and the timestamp its next conditional write takes: each
// one's is above every earlier one's, as ballots are.
struct LwtState {
  PartitionModel partition;
  int64_t next_timestamp_us = 1;
  auto operator<=>(const LwtState&) const = default;
};

class PartitionSearch final : public SearchModel {
 public:
  PartitionSearch(const std::vector<const LwtOp*>& ops, const std::vector<bool>& descending) : ops_(ops) {
    Intern(LwtState{PartitionModel(descending), 1});
    for (const LwtOp* op : ops) {
      const bool definite = op->outcome == LwtOp::Outcome::kOk;
      CHARYBDIS_ASSERT(!definite || op->return_us >= op->call_us);
      CHARYBDIS_ASSERT(op->clock.earliest_us <= op->clock.latest_us);
      // Positions, not times: a return at the instant of a call comes first.
      timed_.push_back(TimedOp{static_cast<uint64_t>(op->call_us) * 2 + 1,
                               definite ? static_cast<uint64_t>(op->return_us) * 2 + 2 : 0, definite});
    }
  }

  std::optional<uint32_t> Step(size_t index, uint32_t state) override {
    const LwtOp& op = *ops_[index];
    const Moment now = op.clock;
    const LwtState& current = states_[state];
    if (op.kind == LwtOp::Kind::kSerialRead) {
      if (Admits(current.partition.Read(op.slice, now), op.slice.limit, op.rows)) return std::nullopt;
      return state;
    }
    Liveness holds = Liveness::kLive;
    for (const LwtStatement& statement : op.statements) {
      if (statement.condition) holds = AllOf(holds, current.partition.Holds(*statement.condition, now));
    }
    if (op.outcome == LwtOp::Outcome::kOk && !op.applied) {
      if (holds == Liveness::kLive) return std::nullopt;
      if (Admits(ConditionedRows(op, current.partition, now), 0, op.current_rows)) return std::nullopt;
      return state;
    }
    if (holds == Liveness::kDead) return op.outcome == LwtOp::Outcome::kOk ? std::nullopt : std::optional(state);
    LwtState next = current;
    for (const LwtStatement& statement : op.statements) {
      next.partition.Apply(statement.write, current.next_timestamp_us, now);
    }
    next.next_timestamp_us++;
    return Intern(std::move(next));
  }

  const std::vector<TimedOp>& timed() const { return timed_; }

 private:
  // The rows a failed condition looked at, in clustering order, as a read
  // may see them.
  static std::vector<ExpectedRow> ConditionedRows(const LwtOp& op, const PartitionModel& partition, Moment now) {
    std::map<Key, bool> keys;
    for (const LwtStatement& statement : op.statements) {
      if (statement.condition) keys[statement.condition->clustering] = true;
    }
    std::vector<ExpectedRow> rows;
    for (const ExpectedRow& row : partition.Read(Slice{}, now)) {
      if (keys.count(row.clustering)) rows.push_back(row);
    }
    return rows;
  }

  uint32_t Intern(LwtState state) {
    auto [it, fresh] = ids_.emplace(std::move(state), static_cast<uint32_t>(states_.size()));
    if (fresh) states_.push_back(it->first);
    return it->second;
  }

  const std::vector<const LwtOp*>& ops_;
  std::vector<TimedOp> timed_;
  std::map<LwtState, uint32_t> ids_;
  std::vector<LwtState> states_;
};

std::string RowsText(const std::vector<ObservedRow>& rows) {
  std::string text = "[";
  for (const ObservedRow& row : rows) {
    absl::StrAppend(&text, text.size() > 1 ? ", " : "", KeyText(row.clustering), "{");
    bool first = true;
    for (const auto& [column, value] : row.columns) {
      absl::StrAppend(&text, first ? "" : ", ", column, "=", value ? ValueText(*value) : "null");
      first = false;
    }
    absl::StrAppend(&text, "}");
  }
  return text + "]";
}

std::string Describe(const LwtOp& op) {
  std::string text = absl::StrCat("process ", op.process, " at ", op.call_us / 1000, "-", op.return_us / 1000,
                                  "ms: ", op.text.empty() ? "(no text)" : op.text, " -> ");
  if (op.kind == LwtOp::Kind::kSerialRead) return text + RowsText(op.rows);
  if (op.applied) return text + "applied";
  return text + "not applied, current " + RowsText(op.current_rows);
}

// The partition's operations in groups that no operation spans: rows one
// operation touches together (a batch's, a slice read's) are one group.
// Rows are independent objects of the model, and linearizability is local
// (Herlihy and Wing): a history is linearizable when each group's is. So
// each group is searched on its own, which keeps a partition of many rows
// and many clients tractable.
std::vector<std::vector<const LwtOp*>> IndependentGroups(const std::vector<const LwtOp*>& history,
                                                         const ClusteringOrder& order) {
  std::map<Key, size_t> index;  // every key the history names
  auto name = [&](const Key& key) { index.emplace(key, index.size()); };
  for (const LwtOp* op : history) {
    for (const LwtStatement& statement : op->statements) {
      name(statement.write.clustering);
      if (statement.condition) name(statement.condition->clustering);
    }
    for (const ObservedRow& row : op->rows) name(row.clustering);
    for (const ObservedRow& row : op->current_rows) name(row.clustering);
  }
  std::vector<size_t> parent(index.size());
  for (size_t i = 0; i < parent.size(); i++) parent[i] = i;
  auto root = [&](size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  std::vector<std::optional<size_t>> group_of;  // by operation: a key of its group
  for (const LwtOp* op : history) {
    std::optional<size_t> first;
    auto touch = [&](const Key& key) {
      const size_t at = root(index.at(key));
      if (first) parent[at] = root(*first);
      else first = at;
    };
    if (op->kind == LwtOp::Kind::kSerialRead) {
      for (const auto& [key, ignored] : index) {
        if (order.InSlice(key, op->slice)) touch(key);
      }
    }
    for (const LwtStatement& statement : op->statements) {
      touch(statement.write.clustering);
      if (statement.condition) touch(statement.condition->clustering);
    }
    for (const ObservedRow& row : op->current_rows) touch(row.clustering);
    group_of.push_back(first);
  }
  std::map<size_t, std::vector<const LwtOp*>> groups;  // by root, then operations alone
  std::vector<std::vector<const LwtOp*>> alone;        // a read of rows no operation names
  for (size_t i = 0; i < history.size(); i++) {
    if (group_of[i]) {
      groups[root(*group_of[i])].push_back(history[i]);
    } else {
      alone.push_back({history[i]});
    }
  }
  for (auto& [ignored, group] : groups) alone.push_back(std::move(group));
  return alone;
}

}  // namespace

LwtCheckResult CheckLwtLinearizable(const std::vector<LwtOp>& operations, const std::vector<bool>& descending,
                                    uint64_t max_states) {
  std::map<std::string, std::vector<const LwtOp*>> by_partition;
  for (const LwtOp& op : operations) {
    if (op.outcome == LwtOp::Outcome::kFail) continue;  // no effect
    // A read with an unknown outcome tells nothing.
    if (op.outcome == LwtOp::Outcome::kInfo && op.kind == LwtOp::Kind::kSerialRead) continue;
    by_partition[op.partition].push_back(&op);
  }
  LwtCheckResult result;
  const ClusteringOrder order(descending);
  for (const auto& [partition, history] : by_partition) {
    result.partitions++;
    result.operations += history.size();
    for (const std::vector<const LwtOp*>& group : IndependentGroups(history, order)) {
      CHARYBDIS_ASSERT(!group.empty());
      result.groups++;
      PartitionSearch search(group, descending);
      size_t stuck = 0;
      const std::optional<bool> verdict = SearchLinearization(search.timed(), search, max_states, &stuck);
      if (!verdict) {
        result.exhausted = true;
        absl::StrAppend(&result.detail, result.detail.empty() ? "" : "; ", "partition ", partition, ": gave up on ",
                        group.size(), " operations after ", max_states, " states");
      } else if (!*verdict && result.linearizable) {
        result.linearizable = false;
        absl::StrAppend(&result.detail, result.detail.empty() ? "" : "; ", "partition ", partition, ": ",
                        group.size(), " operations (of rows they share) admit no linearization; the first that no ",
                        "order explains: ", Describe(*group[stuck]));
      }
      if (result.exhausted) break;
    }
  }
  return result;
}

}  // namespace charybdis::sim::model
