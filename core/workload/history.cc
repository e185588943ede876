#include "core/workload/history.h"

#include <map>

#include "core/env/assert.h"

namespace charybdis {

std::vector<CompletedOp> PairOperations(const History& history) {
  std::vector<CompletedOp> operations;
  std::map<uint64_t, size_t> open;  // process -> index in operations
  for (const HistoryOp& op : history) {
    if (op.type == HistoryOp::Type::kInvoke) {
      const bool fresh = open.emplace(op.process, operations.size()).second;
      CHARYBDIS_ASSERT(fresh);  // one operation at a time per process
      operations.push_back(CompletedOp{&op, nullptr});
      continue;
    }
    auto it = open.find(op.process);
    CHARYBDIS_ASSERT(it != open.end());
    operations[it->second].completion = &op;
    open.erase(it);
  }
  return operations;
}

}  // namespace charybdis
