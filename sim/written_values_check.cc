#include "sim/written_values_check.h"

#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace charybdis::sim {

namespace {

// The timestamps a value was written with, as far as the client knows.
struct Written {
  std::set<Timestamp> acknowledged_at;
  bool at_unknown_timestamp = false;  // a cas, or an outcome never learned
};
using WrittenValues = std::map<std::pair<std::string, std::string>, Written>;  // key, value

bool MayHaveTakenEffect(const CompletedOp& op) {
  if (op.completion == nullptr || op.completion->type == HistoryOp::Type::kInfo) return true;
  if (op.completion->type == HistoryOp::Type::kFail) return false;
  return op.invoke->function != HistoryOp::Function::kCas || op.completion->applied;
}

WrittenValues CollectWrites(const std::vector<CompletedOp>& operations) {
  WrittenValues written;
  for (const CompletedOp& op : operations) {
    const HistoryOp& invoke = *op.invoke;
    const bool writes = invoke.function == HistoryOp::Function::kWrite ||
                        invoke.function == HistoryOp::Function::kCas;
    if (!writes || !invoke.has_value || !MayHaveTakenEffect(op)) continue;
    Written& entry = written[{invoke.Register(), invoke.value}];
    // A Paxos write's cells take the ballot of the round that commits them,
    // which may be a later proposer's that finished it.
    const bool paxos = invoke.consistency == CL_SERIAL || invoke.consistency == CL_LOCAL_SERIAL;
    const bool known = invoke.function == HistoryOp::Function::kWrite && !paxos &&
                       op.completion != nullptr && op.completion->type == HistoryOp::Type::kOk &&
                       op.completion->timestamp != 0;
    if (known) {
      entry.acknowledged_at.insert(op.completion->timestamp);
    } else {
      entry.at_unknown_timestamp = true;
    }
  }
  return written;
}

// Why the value this read returned was never written, or "".
std::string Invented(const WrittenValues& written, const HistoryOp& invoke, const HistoryOp& read) {
  auto it = written.find({invoke.Register(), read.value});
  if (it == written.end()) {
    return absl::StrCat("key ", invoke.key, ": a read at ", invoke.time, "ns returned \"",
                        read.value, "\", which no write wrote");
  }
  const Written& entry = it->second;
  if (entry.at_unknown_timestamp || read.timestamp == 0 || entry.acknowledged_at.count(read.timestamp)) {
    return "";
  }
  return absl::StrCat("key ", invoke.key, ": a read at ", invoke.time, "ns returned \"", read.value,
                      "\"@", read.timestamp, ", but it was written @", *entry.acknowledged_at.begin());
}

}  // namespace

CheckResult CheckReadsReturnWrittenValues(const History& history) {
  const std::vector<CompletedOp> operations = PairOperations(history);
  const WrittenValues written = CollectWrites(operations);
  uint64_t checked = 0, violations = 0;
  std::string examples;
  for (const CompletedOp& op : operations) {
    if (op.completion == nullptr || op.completion->type != HistoryOp::Type::kOk ||
        op.invoke->function != HistoryOp::Function::kRead || !op.completion->has_value) {
      continue;
    }
    checked++;
    const std::string why = Invented(written, *op.invoke, *op.completion);
    if (why.empty()) continue;
    if (++violations <= 5) absl::StrAppend(&examples, examples.empty() ? "" : "; ", why);
  }
  if (checked == 0) {
    return NothingToCheck("reads_return_written_values", "no read returned a value");
  }
  if (violations > 0) {
    return CheckResult{"reads_return_written_values", false,
                       absl::StrCat(violations, " of ", checked, " reads returned values never written: ", examples)};
  }
  return CheckResult{"reads_return_written_values", true,
                     absl::StrCat(checked, " values read, each written as read")};
}

}  // namespace charybdis::sim
