#include "core/repair/repair_answerer.h"

#include <memory>
#include <string>
#include <vector>

#include "core/data/big_endian.h"
#include "core/data/murmur3.h"
#include "core/data/storage_codec.h"
#include "core/env/assert.h"
#include "core/replica/shard_scan.h"
#include "core/replica/stored_partition.h"

namespace charybdis::repair {

namespace {

Address SenderOf(const Envelope& message) { return Address{message.from_node(), message.from_shard()}; }

ScanOp ScanOf(const RepairHashRequest& request) {
  ScanOp scan;
  scan.set_table(request.table());
  scan.set_start_token(request.start_token());
  scan.set_end_token(request.end_token());
  scan.set_resume(request.resume());
  scan.set_after_partition_key(request.after_partition_key());
  scan.set_after_clustering_key(request.after_clustering_key());
  scan.set_limit(request.max_rows());
  return scan;
}

void AppendSized(std::string& out, const std::string& bytes) {
  AppendBigEndian(out, bytes.size(), 4);
  out += bytes;
}

// Hashes the scanned rows into `answer`; false if a partition cannot be
// served (a failed read, or corrupt entries, now dropped).
bool HashRows(const ShardEnv& env, ShardMetrics& metrics, const PurgeHorizon& horizon, const std::string& table,
              std::vector<KeyValue> entries, bool each_row, RepairHashes& answer) {
  if (!entries.empty()) {
    std::optional<storage_codec::StoredRow> last = storage_codec::RowOfKey(entries.back().key);
    if (!last) return false;  // not a data key: corrupt (it fails decoding too)
    // Not exhausted, the last is a row (ScanShardRows ends at one).
    answer.set_last_partition_key(last->partition_key);
    answer.set_last_clustering_key(last->clustering_key);
  }
  std::string encoded;
  for (auto& [partition_key, stored] : GroupByPartition(std::move(entries))) {
    absl::StatusOr<Partition> partition =
        ServablePartition(env, metrics, std::move(stored), horizon(table, TokenOf(partition_key)));
    if (!partition.ok()) return false;
    const auto add = [&](const std::string& clustering_key, bool range_tombstones, const Partition& alone) {
      const uint64_t digest = Digest(alone);
      AppendSized(encoded, partition_key);
      encoded.push_back(range_tombstones ? 'R' : 'r');
      AppendSized(encoded, clustering_key);
      AppendBigEndian(encoded, digest, 8);
      answer.set_rows(answer.rows() + 1);
      if (!each_row) return;
      RowHash& hashed = *answer.add_row();
      hashed.set_partition_key(partition_key);
      hashed.set_clustering_key(clustering_key);
      hashed.set_range_tombstones(range_tombstones);
      hashed.set_hash(digest);
    };
    // The partition's range tombstones are compared as a row of their own.
    if (!partition->range_tombstones.empty()) {
      Partition deletions;
      deletions.range_tombstones = std::move(partition->range_tombstones);
      add("", true, deletions);
    }
    for (auto& [clustering_key, row] : partition->rows) {
      Partition alone;
      alone.rows.emplace(clustering_key, std::move(row));
      add(clustering_key, false, alone);
    }
  }
  answer.set_hash(CassandraMurmur3(encoded).low);
  return true;
}

}  // namespace

void RepairAnswerer::OnHashRequest(const Envelope& message) {
  const RepairHashRequest& request = message.repair_hash_request();
  CHARYBDIS_ASSERT(request.max_rows() >= 1);
  ScanShardRows(*env_.storage, ScanOf(request),
                [this, sender = SenderOf(message), request_id = request.request_id(), table = request.table(),
                 each_row = request.each_row()](absl::StatusOr<ShardScanResult> scanned) {
                  Envelope reply;
                  RepairHashes& answer = *reply.mutable_repair_hashes();
                  answer.set_request_id(request_id);
                  if (scanned.ok() &&
                      HashRows(env_, metrics_, purge_horizon_, table, std::move(scanned->entries), each_row, answer)) {
                    answer.set_ok(true);
                    answer.set_exhausted(scanned->exhausted);
                  } else {
                    answer = RepairHashes();
                    answer.set_request_id(request_id);
                  }
                  env_.network->Send(sender, std::move(reply));
                });
}

void RepairAnswerer::OnFetch(const Envelope& message) {
  const RepairFetch& request = message.repair_fetch();
  struct Fetching {
    Envelope reply;
    size_t waiting = 0;
    bool failed = false;
  };
  auto fetching = std::make_shared<Fetching>();
  fetching->reply.mutable_repair_rows()->set_request_id(request.request_id());
  fetching->waiting = request.row_size();
  const Address sender = SenderOf(message);
  const auto answer = [this, sender, fetching] {
    RepairRows& rows = *fetching->reply.mutable_repair_rows();
    rows.set_ok(!fetching->failed);
    if (fetching->failed) rows.clear_partition();
    env_.network->Send(sender, std::move(fetching->reply));
  };
  if (fetching->waiting == 0) return answer();
  for (const RowKey& row : request.row()) {
    auto fetched = [this, fetching, answer, table = request.table(),
                    key = row.partition_key()](absl::StatusOr<std::vector<KeyValue>> stored) {
      absl::StatusOr<Partition> data =
          ServablePartition(env_, metrics_, std::move(stored), purge_horizon_(table, TokenOf(key)));
      if (!data.ok()) {
        fetching->failed = true;
      } else if (!data->empty()) {
        PartitionData& partition = *fetching->reply.mutable_repair_rows()->add_partition();
        data->ToProto(&partition);
        partition.set_table(table);
        partition.set_partition_key(key);
      }
      CHARYBDIS_ASSERT(fetching->waiting > 0);
      if (--fetching->waiting == 0) answer();
    };
    if (row.range_tombstones()) {
      const std::string begin = storage_codec::RangeTombstonePrefix(request.table(), row.partition_key());
      env_.storage->Scan(begin, storage_codec::PrefixEnd(begin), SIZE_MAX, std::move(fetched));
      continue;
    }
    // A row with its partition's range tombstones, which the repair merges
    // it against (they differ apart, if they do).
    const std::string begin = storage_codec::RowPrefix(request.table(), row.partition_key(), row.clustering_key());
    ScanPartitionRows(*env_.storage, request.table(), row.partition_key(), {{begin, storage_codec::PrefixEnd(begin)}},
                      std::move(fetched));
  }
}

void RepairAnswerer::OnPush(const Envelope& message) {
  const RepairPush& push = message.repair_push();
  WriteBatch batch;
  for (const PartitionData& mutation : push.mutation()) {
    storage_codec::AddMutation(mutation.table(), mutation.partition_key(), Partition::FromProto(mutation), batch);
  }
  // Synced before the ack: a range the repair then calls in agreement
  // stays so through a crash of this replica.
  env_.storage->Apply(std::move(batch), Durability::kSynced,
                      [this, sender = SenderOf(message), request_id = push.request_id()](absl::Status status) {
                        if (status.ok()) {
                          metrics_.database_total_writes++;
                        } else {
                          metrics_.database_failed_writes++;
                        }
                        Envelope reply;
                        reply.mutable_repair_push_ack()->set_request_id(request_id);
                        reply.mutable_repair_push_ack()->set_ok(status.ok());
                        env_.network->Send(sender, std::move(reply));
                      });
}

}  // namespace charybdis::repair
