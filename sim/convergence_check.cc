#include "sim/convergence_check.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "core/request/consistency.h"
#include "core/data/storage_codec.h"
#include "core/data/token.h"

namespace charybdis::sim {

namespace {

// The replica's reconciled data for a partition, and how many of its
// stored versions fail their checksum (corrupt bytes left on a replica
// are not converged data).
std::pair<Partition, size_t> OnDisk(const SimStorage& storage, const std::string& table, const std::string& key) {
  const std::string prefix = storage_codec::PartitionPrefix(table, key);
  const std::string end = storage_codec::PrefixEnd(prefix);
  std::vector<KeyValue> stored;
  const auto& contents = storage.contents();
  for (auto it = contents.lower_bound(prefix); it != contents.end() && it->first < end; ++it) {
    stored.push_back(KeyValue{it->first, it->second});
  }
  storage_codec::Decoded decoded = storage_codec::DecodeScan(stored);
  return {std::move(decoded.partition), decoded.corrupt_keys.size()};
}

// "node 2: row '' cells v@1234 tombstone@99" for a failure report.
std::string Describe(NodeId node, const Partition& partition) {
  std::string text = absl::StrCat("node ", node, ":");
  for (const auto& [range, timestamp] : partition.range_tombstones) {
    absl::StrAppend(&text, " rows ['", range.start, "', '", range.end, "') deleted@", timestamp);
  }
  for (const auto& [key, row] : partition.rows) {
    absl::StrAppend(&text, " row '", key, "'");
    if (row.tombstone) absl::StrAppend(&text, " deleted@", *row.tombstone);
    for (const auto& [column, cell] : row.cells) {
      absl::StrAppend(&text, " ", column, cell.tombstone ? " deleted@" : "@", cell.timestamp);
    }
  }
  return text;
}

// An acknowledged plain write (ANY included; not Paxos writes).
bool AcknowledgedPlainWrite(const CompletedOp& op) {
  const HistoryOp& invoke = *op.invoke;
  const bool plain_write =
      invoke.function == HistoryOp::Function::kWrite || invoke.function == HistoryOp::Function::kDelete;
  return plain_write && !IsSerial(invoke.consistency) && op.completion != nullptr &&
         op.completion->type == HistoryOp::Type::kOk;
}

// Whether `storage` holds the write `op`, or a newer version of its key.
bool Holds(const SimStorage& storage, const CompletedOp& op) {
  // A partition delete's range tombstone counts: it is a newer version.
  const std::optional<Timestamp> newest = OnDisk(storage, op.invoke->table, op.invoke->key).first.NewestTimestamp();
  return newest.has_value() && *newest >= op.completion->timestamp;
}

using NewestDeletes = std::map<std::pair<std::string, std::string>, Timestamp>;  // table, key -> timestamp

// The newest acknowledged plain delete of each key deleted.
NewestDeletes NewestAcknowledgedDeletes(const History& history) {
  NewestDeletes deleted;
  for (const CompletedOp& op : PairOperations(history)) {
    if (!AcknowledgedPlainWrite(op) || op.invoke->function != HistoryOp::Function::kDelete) continue;
    Timestamp& newest = deleted[{op.invoke->table, op.invoke->key}];
    newest = std::max(newest, op.completion->timestamp);
  }
  return deleted;
}

}  // namespace

CheckResult CheckReplicasConverge(const Cluster& cluster, const History& history) {
  std::set<std::pair<std::string, std::string>> keys;  // table, key
  for (const HistoryOp& op : history) {
    if (op.function != HistoryOp::Function::kRead) keys.insert({op.table, op.key});
  }
  CheckResult result{"replicas_converge", true, ""};
  const std::shared_ptr<const TokenRing> owners = cluster.OwnersRing();
  uint64_t diverged = 0;
  const uint32_t shards = cluster.topology().shards_per_node;
  for (const auto& [table, key] : keys) {
    const Token token = TokenOf(key);
    std::optional<uint64_t> agreed;
    bool differs = false;
    std::string copies;
    for (NodeId replica : owners->ReplicasOf(token)) {
      const SimNode& node = cluster.node(replica);
      if (!node.running()) continue;
      const auto [partition, corrupt] = OnDisk(node.storage(ShardOf(token, shards)), table, key);
      const uint64_t digest = Digest(partition);
      if ((agreed && *agreed != digest) || corrupt > 0) differs = true;
      agreed = digest;
      absl::StrAppend(&copies, copies.empty() ? "" : "; ", Describe(replica, partition));
      if (corrupt > 0) absl::StrAppend(&copies, " and ", corrupt, " corrupt versions");
    }
    if (!differs) continue;
    diverged++;
    if (diverged <= 3) {
      absl::StrAppend(&result.detail, result.detail.empty() ? "" : ", ", key, " (", copies, ")");
    }
  }
  result.passed = diverged == 0;
  result.detail = result.passed
                      ? absl::StrCat(keys.size(), " keys identical on every running replica")
                      : absl::StrCat(diverged, " of ", keys.size(),
                                     " keys differ between replicas, e.g. ", result.detail);
  return result;
}

CheckResult CheckAcknowledgedWritesKept(const Cluster& cluster, const History& history) {
  CheckResult result{"acknowledged_writes_kept", true, ""};
  const std::shared_ptr<const TokenRing> owners = cluster.OwnersRing();
  const uint32_t shards = cluster.topology().shards_per_node;
  uint64_t checked = 0, unchecked = 0, lost = 0;
  for (const CompletedOp& op : PairOperations(history)) {
    if (!AcknowledgedPlainWrite(op)) continue;
    const HistoryOp& invoke = *op.invoke;
    const Token token = TokenOf(invoke.key);
    bool running = false, kept = false;
    for (NodeId replica : owners->ReplicasOf(token)) {
      const SimNode& node = cluster.node(replica);
      if (!node.running()) continue;
      running = true;
      kept = kept || Holds(node.storage(ShardOf(token, shards)), op);
    }
    if (!running) {
      unchecked++;
      continue;
    }
    checked++;
    if (kept) continue;
    lost++;
    if (lost <= 5) {
      absl::StrAppend(&result.detail, result.detail.empty() ? "" : "; ", "key ", invoke.key, ": a ",
                      ConsistencyName(invoke.consistency), " write acknowledged at ",
                      op.completion->time, "ns with timestamp ", op.completion->timestamp,
                      " is on no running replica");
    }
  }
  if (checked == 0) {
    return NothingToCheck("acknowledged_writes_kept",
                          "no acknowledged plain writes with a running replica");
  }
  result.passed = lost == 0;
  result.detail = result.passed
                      ? absl::StrCat(checked, " acknowledged writes on a running replica (", unchecked,
                                     " with every replica down not checked)")
                      : absl::StrCat(lost, " of ", checked, " acknowledged writes lost: ", result.detail);
  return result;
}

CheckResult CheckNoResurrection(const Cluster& cluster, const History& history) {
  CheckResult result{"no_resurrection", true, ""};
  const NewestDeletes deleted = NewestAcknowledgedDeletes(history);
  if (deleted.empty()) return NothingToCheck("no_resurrection", "no acknowledged delete");
  const std::shared_ptr<const TokenRing> owners = cluster.OwnersRing();
  const uint32_t shards = cluster.topology().shards_per_node;
  uint64_t resurrected = 0;
  for (const auto& [key, deleted_at] : deleted) {
    const Token token = TokenOf(key.second);
    Partition merged;
    for (NodeId replica : owners->ReplicasOf(token)) {
      merged.Merge(OnDisk(cluster.node(replica).storage(ShardOf(token, shards)), key.first, key.second).first);
    }
    merged.Compact();
    for (const auto& [clustering_key, row] : merged.rows) {
      for (const auto& [column, cell] : row.cells) {
        if (cell.tombstone || cell.timestamp > deleted_at) continue;
        if (++resurrected <= 5) {
          absl::StrAppend(&result.detail, result.detail.empty() ? "" : "; ", "key ", key.second, ": ", column, "@",
                          cell.timestamp, " is back after a delete acknowledged at timestamp ", deleted_at);
        }
      }
    }
  }
  result.passed = resurrected == 0;
  result.detail = result.passed ? absl::StrCat(deleted.size(), " deleted keys stay deleted on the replicas' disks")
                                : absl::StrCat(resurrected, " deleted values came back: ", result.detail);
  return result;
}

CheckResult CheckRepairedWritesEverywhere(const Cluster& cluster, const History& history, NodeId node,
                                          Nanos started, const std::string& name) {
  CheckResult result{name, true, ""};
  const std::shared_ptr<const TokenRing> owners = cluster.OwnersRing();
  const uint32_t shards = cluster.topology().shards_per_node;
  uint64_t checked = 0, missing = 0;
  const NewestDeletes deleted = NewestAcknowledgedDeletes(history);
  // Keys with a plain delete not answered yet, or answered uncertain: it
  // may have been applied, at any timestamp.
  std::set<std::pair<std::string, std::string>> perhaps_deleted;
  for (const CompletedOp& op : PairOperations(history)) {
    const bool uncertain = op.completion == nullptr || op.completion->type == HistoryOp::Type::kInfo;
    if (op.invoke->function == HistoryOp::Function::kDelete && !IsSerial(op.invoke->consistency) && uncertain) {
      perhaps_deleted.insert({op.invoke->table, op.invoke->key});
    }
  }
  for (const CompletedOp& op : PairOperations(history)) {
    if (!AcknowledgedPlainWrite(op) || op.completion->time >= started) continue;
    // A compaction may have purged a delete with what it shadowed: then
    // the replica holds nothing of the key.
    auto delete_of_key = deleted.find({op.invoke->table, op.invoke->key});
    const bool may_be_purged = (delete_of_key != deleted.end() && delete_of_key->second >= op.completion->timestamp) ||
                               perhaps_deleted.count({op.invoke->table, op.invoke->key}) > 0;
    const Token token = TokenOf(op.invoke->key);
    const std::vector<NodeId>& replicas = owners->ReplicasOf(token);
    if (std::find(replicas.begin(), replicas.end(), node) == replicas.end()) continue;
    // Down replicas too: a repair that answered OK heard from every one,
    // and what it sent them was synced.
    for (NodeId replica : replicas) {
      checked++;
      const SimStorage& storage = cluster.node(replica).storage(ShardOf(token, shards));
      if (Holds(storage, op)) continue;
      if (may_be_purged && OnDisk(storage, op.invoke->table, op.invoke->key).first.rows.empty()) continue;
      if (++missing <= 5) {
        absl::StrAppend(&result.detail, result.detail.empty() ? "" : "; ", "key ", op.invoke->key,
                        ": the write acknowledged at ", op.completion->time, "ns with timestamp ",
                        op.completion->timestamp, " is not on node ", replica);
      }
    }
  }
  if (checked == 0) {
    return NothingToCheck(name, absl::StrCat("no write acknowledged before node ", node, "'s repair"));
  }
  result.passed = missing == 0;
  result.detail = result.passed
                      ? absl::StrCat(checked, " copies of writes acknowledged before node ", node,
                                     "'s repair began, all held by their replicas")
                      : absl::StrCat(missing, " of ", checked, " copies missing after node ", node,
                                     "'s repair: ", result.detail);
  return result;
}

}  // namespace charybdis::sim
