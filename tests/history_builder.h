#pragma once

// Client histories for checker tests: events of key "k" appended in order,
// each at the next simulated nanosecond.

#include <string>

#include "core/workload/history.h"

namespace charybdis::sim::testing {

class HistoryBuilder {
 public:
  // One event of an operation of `process`.
  HistoryOp& Add(uint64_t process, HistoryOp::Type type, HistoryOp::Function function,
                 ConsistencyLevel level, Timestamp timestamp = 0, const std::string& datacenter = "dc1") {
    HistoryOp op;
    op.process = process;
    op.type = type;
    op.function = function;
    op.key = "k";
    op.consistency = level;
    op.timestamp = timestamp;
    op.datacenter = datacenter;
    op.time = static_cast<Nanos>(history_.size());
    history_.push_back(op);
    return history_.back();
  }

  HistoryOp& Invoke(uint64_t process, HistoryOp::Function function, ConsistencyLevel level,
                    const std::string& value = "", const std::string& datacenter = "dc1") {
    HistoryOp& invoke = Add(process, HistoryOp::Type::kInvoke, function, level, 0, datacenter);
    invoke.has_value = !value.empty();
    invoke.value = value;
    return invoke;
  }
  // The completion (`type` ok, fail or info) of the operation `process`
  // invoked last.
  HistoryOp& Complete(uint64_t process, HistoryOp::Type type, HistoryOp::Function function,
                      ConsistencyLevel level, Timestamp timestamp, const std::string& value,
                      const std::string& datacenter = "dc1") {
    HistoryOp& done = Add(process, type, function, level, timestamp, datacenter);
    done.has_value = !value.empty();
    done.value = value;
    return done;
  }
  HistoryOp& Ok(uint64_t process, HistoryOp::Function function, ConsistencyLevel level,
                Timestamp timestamp, const std::string& value) {
    return Complete(process, HistoryOp::Type::kOk, function, level, timestamp, value);
  }

  // An operation invoked and completed at once. A write's value travels in
  // both events; a read's only in its answer.
  HistoryOp& Completed(uint64_t process, HistoryOp::Type type, HistoryOp::Function function,
                       ConsistencyLevel level, Timestamp timestamp, const std::string& value,
                       const std::string& datacenter = "dc1") {
    Invoke(process, function, level, function == HistoryOp::Function::kRead ? "" : value, datacenter);
    return Complete(process, type, function, level, timestamp, value, datacenter);
  }

  History history_;
};

}  // namespace charybdis::sim::testing
