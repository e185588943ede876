#include "sim/semantics_checks.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/request/consistency.h"
#include "sim/read_your_writes_check.h"

namespace charybdis::sim {

int CompareVersions(const Version& a, const Version& b) {
  if (a.timestamp != b.timestamp) return a.timestamp > b.timestamp ? 1 : -1;
  if (a.live != b.live) return a.live ? -1 : 1;  // the tombstone wins a tie
  if (!a.live) return 0;
  // Larger value bytes win, compared unsigned.
  const size_t common = std::min(a.value.size(), b.value.size());
  for (size_t i = 0; i < common; i++) {
    const auto x = static_cast<unsigned char>(a.value[i]);
    const auto y = static_cast<unsigned char>(b.value[i]);
    if (x != y) return x > y ? 1 : -1;
  }
  if (a.value.size() != b.value.size()) return a.value.size() > b.value.size() ? 1 : -1;
  return 0;
}

Version VersionOf(const HistoryOp& completion) {
  Version version;
  version.timestamp = completion.timestamp;
  version.live = completion.function != HistoryOp::Function::kDelete && completion.has_value;
  if (version.live) version.value = completion.value;
  return version;
}

namespace {

size_t PositionOf(const History& history, const HistoryOp* op) {
  return static_cast<size_t>(op - history.data());
}

// Versions a later read must reflect, of one key from one level and
// datacenter, in completion order, each with the newest version so far.
struct Sources {
  std::vector<size_t> completed;
  std::vector<Version> newest;
  std::vector<std::pair<size_t, Version>> unsorted;
};
using SourceKey = std::tuple<std::string, ConsistencyLevel, std::string>;  // key, level, dc
using SourceGroups = std::map<SourceKey, Sources>;

void SortByCompletion(SourceGroups& groups) {
  for (auto& [key, group] : groups) {
    std::sort(group.unsorted.begin(), group.unsorted.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [position, version] : group.unsorted) {
      group.completed.push_back(position);
      const bool newer = group.newest.empty() || CompareVersions(version, group.newest.back()) > 0;
      group.newest.push_back(newer ? version : group.newest.back());
    }
    group.unsorted.clear();
  }
}

bool IsOkRead(const CompletedOp& op) {
  return op.completion != nullptr && op.completion->type == HistoryOp::Type::kOk &&
         op.invoke->function == HistoryOp::Function::kRead;
}

std::string Describe(const Version& version) {
  if (version.timestamp == 0 && !version.live) return "nothing";
  return version.live ? absl::StrCat("\"", version.value, "\"@", version.timestamp)
                      : absl::StrCat("a tombstone@", version.timestamp);
}

// Every ok read against the sources of its key at overlapping levels that
// completed before the read was invoked.
// `source` names what the sources are ("read"), `did` what they did
// ("had returned").
CheckResult CheckReadsReflect(const std::string& name, const std::string& source,
                              const std::string& did,
                              const TokenRing& ring, const History& history,
                              const SourceGroups& groups) {
  uint64_t reads = 0, checked = 0, violations = 0;
  std::string examples;
  for (const CompletedOp& read : PairOperations(history)) {
    if (!IsOkRead(read)) continue;
    reads++;
    const Version seen = VersionOf(*read.completion);
    const size_t invoked = PositionOf(history, read.invoke);
    for (auto it = groups.lower_bound({read.invoke->Register(), CL_UNSET, ""});
         it != groups.end() && std::get<0>(it->first) == read.invoke->Register(); ++it) {
      const auto& [key, level, datacenter] = it->first;
      if (!LevelsOverlap(ring, level, datacenter, read.invoke->consistency,
                         read.invoke->datacenter)) {
        continue;
      }
      const Sources& group = it->second;
      const auto before = static_cast<size_t>(
          std::lower_bound(group.completed.begin(), group.completed.end(), invoked) -
          group.completed.begin());
      if (before == 0) continue;
      checked++;
      const Version& required = group.newest[before - 1];
      if (CompareVersions(required, seen) <= 0) continue;
      if (++violations <= 5) {
        absl::StrAppend(&examples, examples.empty() ? "" : "; ", "key ", key, ": ",
                        ConsistencyName(read.invoke->consistency), " read at ", read.invoke->time,
                        "ns returned ", Describe(seen), " but a ", ConsistencyName(level), " ",
                        source, " ", did, " ", Describe(required), " before it began");
      }
    }
  }
  if (reads == 0) return NothingToCheck(name, "no successful reads");
  CheckResult result{name, violations == 0, ""};
  result.detail = violations == 0
                      ? absl::StrCat(reads, " reads checked against ", checked,
                                     " overlapping sets of earlier ", source, "s")
                      : absl::StrCat(violations, " violations: ", examples);
  return result;
}

}  // namespace

CheckResult CheckMonotonicReads(const TokenRing& ring, const History& history) {
  SourceGroups groups;
  for (const CompletedOp& op : PairOperations(history)) {
    if (!IsOkRead(op)) continue;
    groups[{op.invoke->Register(), op.invoke->consistency, op.invoke->datacenter}].unsorted.emplace_back(
        PositionOf(history, op.completion), VersionOf(*op.completion));
  }
  SortByCompletion(groups);
  return CheckReadsReflect("monotonic_reads", "read", "had returned", ring, history, groups);
}

CheckResult CheckLastWriteWins(const TokenRing& ring, const History& history) {
  SourceGroups groups;
  for (const CompletedOp& op : PairOperations(history)) {
    if (op.completion == nullptr || op.completion->type != HistoryOp::Type::kOk) continue;
    const HistoryOp::Function function = op.invoke->function;
    if (function == HistoryOp::Function::kRead) continue;
    if (function == HistoryOp::Function::kCas && !op.completion->applied) continue;
    groups[{op.invoke->Register(), op.invoke->consistency, op.invoke->datacenter}].unsorted.emplace_back(
        PositionOf(history, op.completion), VersionOf(*op.completion));
  }
  SortByCompletion(groups);
  return CheckReadsReflect("last_write_wins", "write", "had been acknowledged with", ring,
                           history, groups);
}

CheckResult CheckCoordinatorTimestamps(const History& history) {
  struct Stamp {
    size_t invoked, completed;
    Timestamp timestamp;
  };
  using Life = std::tuple<uint32_t, uint32_t, uint64_t>;  // node, shard, life
  std::map<Life, std::vector<Stamp>> lives;
  for (const CompletedOp& op : PairOperations(history)) {
    const HistoryOp* done = op.completion;
    if (done == nullptr || done->type != HistoryOp::Type::kOk || done->client_timestamp) continue;
    if (done->coordinator_life == 0) continue;  // a history that did not record its coordinator
    const HistoryOp::Function function = op.invoke->function;
    if (function != HistoryOp::Function::kWrite && function != HistoryOp::Function::kDelete) continue;
    if (IsSerial(op.invoke->consistency)) continue;  // stamped by a ballot
    lives[{done->coordinator_node, done->coordinator_shard, done->coordinator_life}].push_back(
        Stamp{PositionOf(history, op.invoke), PositionOf(history, done), done->timestamp});
  }
  uint64_t writes = 0, violations = 0;
  std::string examples;
  auto report = [&](const Life& life, const std::string& what) {
    if (++violations > 5) return;
    absl::StrAppend(&examples, examples.empty() ? "" : "; ", "node ", std::get<0>(life), " shard ",
                    std::get<1>(life), ": ", what);
  };
  for (auto& [life, stamps] : lives) {
    writes += stamps.size();
    // Unique: sorted by timestamp, neighbours differ.
    std::vector<Timestamp> sorted;
    for (const Stamp& stamp : stamps) sorted.push_back(stamp.timestamp);
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 1; i < sorted.size(); i++) {
      if (sorted[i] == sorted[i - 1]) report(life, absl::StrCat("timestamp ", sorted[i], " stamped twice"));
    }
    // Ordered: by completion, the newest so far is below every later write.
    std::sort(stamps.begin(), stamps.end(),
              [](const Stamp& a, const Stamp& b) { return a.completed < b.completed; });
    std::vector<size_t> completed;
    std::vector<Timestamp> newest;
    for (const Stamp& stamp : stamps) {
      completed.push_back(stamp.completed);
      newest.push_back(newest.empty() ? stamp.timestamp : std::max(newest.back(), stamp.timestamp));
    }
    for (const Stamp& stamp : stamps) {
      const auto before = static_cast<size_t>(
          std::lower_bound(completed.begin(), completed.end(), stamp.invoked) - completed.begin());
      if (before > 0 && newest[before - 1] >= stamp.timestamp) {
        report(life, absl::StrCat("a write stamped ", stamp.timestamp, " after one stamped ",
                                  newest[before - 1], " had completed"));
      }
    }
  }
  if (writes == 0) {
    return NothingToCheck("coordinator_timestamps",
                          "no acknowledged writes that name their coordinator");
  }
  CheckResult result{"coordinator_timestamps", violations == 0, ""};
  result.detail = violations == 0
                      ? absl::StrCat(writes, " coordinator-stamped writes from ", lives.size(),
                                     " coordinator lives strictly increase")
                      : absl::StrCat(violations, " violations: ", examples);
  return result;
}

}  // namespace charybdis::sim
