#include "core/replica/replica.h"

#include "core/env/assert.h"
#include "core/env/buggify_actions.h"
#include "core/data/storage_codec.h"
#include "core/replica/shard_scan.h"
#include "core/replica/stored_partition.h"

namespace charybdis {

namespace {

Address SenderOf(const Envelope& message) {
  return Address{message.from_node(), message.from_shard()};
}

}  // namespace

bool Replica::Fenced(uint64_t topology_version) const {
  // 0: not routed by a topology (a hint, a read repair, a batch log replay).
  return topology_version != 0 && topology_version < fence_;
}

bool Replica::RefusedPaxos(const Envelope& message) {
  Envelope reply;
  if (message.has_paxos_prepare()) {
    if (!Fenced(message.paxos_prepare().topology_version())) return false;
    // As a write: a round among the owners of an older topology may miss
    // an owner that now counts, and decide what a quorum of the new ones
    // never saw (ScyllaDB #7243's split brain).
    CHARYBDIS_PROBE(env_.probes, "replica.paxos_fenced");
    reply.mutable_paxos_promise()->set_request_id(message.paxos_prepare().request_id());
    reply.mutable_paxos_promise()->set_fenced(true);
  } else {
    CHARYBDIS_ASSERT(message.has_paxos_accept());
    if (!Fenced(message.paxos_accept().topology_version())) return false;
    CHARYBDIS_PROBE(env_.probes, "replica.paxos_fenced");
    reply.mutable_paxos_accept_reply()->set_request_id(message.paxos_accept().request_id());
    reply.mutable_paxos_accept_reply()->set_fenced(true);
  }
  env_.network->Send(SenderOf(message), std::move(reply));
  return true;
}

void Replica::OnWrite(const Envelope& message) {
  const ReplicaWrite& write = message.replica_write();
  const PartitionData& mutation = write.mutation();
  if (Fenced(write.topology_version())) {
    // Its coordinator routed it by a topology a barrier has passed: it may
    // have left out a replica that now counts. Refused, the write cannot
    // be acknowledged by replicas the move no longer counts on alone.
    CHARYBDIS_PROBE(env_.probes, "replica.write_fenced");
    Envelope reply;
    reply.mutable_replica_write_ack()->set_request_id(write.request_id());
    reply.mutable_replica_write_ack()->set_fenced(true);
    reply.mutable_replica_write_ack()->set_fence(fence_);
    return env_.network->Send(SenderOf(message), std::move(reply));
  }
  Partition partition = Partition::FromProto(mutation);
  // A replay's (a hint's, a batch log's) writes from before the purge
  // horizon may have been deleted and purged here already: applied, they
  // would come back (Cassandra drops hints and batches older than
  // gc_grace for the same reason).
  if (write.replay() && DropOlderThan(partition, replay_horizon_(mutation.table(), TokenOf(mutation.partition_key())))) {
    CHARYBDIS_PROBE(env_.probes, "replica.replay_past_horizon_dropped");
    metrics_.replays_dropped_past_horizon++;
  }
  WriteBatch batch;
  storage_codec::AddMutation(mutation.table(), mutation.partition_key(), partition, batch);
  const Address sender = SenderOf(message);
  const uint64_t request_id = write.request_id();
  // Synced before the ack: an acknowledged write survives a crash of every
  // replica that acknowledged it.
  env_.storage->Apply(std::move(batch), Durability::kSynced,
                      [this, sender, request_id](absl::Status status) {
                        if (status.ok()) {
                          metrics_.database_total_writes++;
                        } else {
                          metrics_.database_failed_writes++;
                        }
                        Envelope reply;
                        reply.mutable_replica_write_ack()->set_request_id(request_id);
                        reply.mutable_replica_write_ack()->set_ok(status.ok());
                        SendPerhapsLate(env_, "replica.write_ack_late", sender, std::move(reply));
                      });
}

void Replica::OnRead(const Envelope& message) {
  const ReplicaRead& request = message.replica_read();
  const ReadOp& read = request.read();
  std::string begin, end;
  if (read.range()) {
    begin = storage_codec::RowPrefix(read.table(), read.partition_key(), read.start());
    end = read.end().empty()
              ? storage_codec::PrefixEnd(storage_codec::PartitionPrefix(read.table(), read.partition_key()))
              : storage_codec::RowPrefix(read.table(), read.partition_key(), read.end());
    // To the partition's end: its rows all sort below it.
    CHARYBDIS_ASSERT(!read.end().empty() || begin < end);
  } else {
    begin = storage_codec::RowPrefix(read.table(), read.partition_key(), read.clustering_key());
    end = storage_codec::PrefixEnd(begin);
    CHARYBDIS_ASSERT(begin < end);
  }
  const Address sender = SenderOf(message);
  const uint64_t request_id = request.request_id();
  const bool digest_only = request.digest_only();
  if (Fenced(request.topology_version())) {
    // Routed by a topology a barrier has passed: this replica may no longer
    // get the writes of its range. Refused, the coordinator asks another.
    CHARYBDIS_PROBE(env_.probes, "replica.read_fenced");
    Envelope reply;
    reply.mutable_replica_read_response()->set_request_id(request_id);
    reply.mutable_replica_read_response()->set_digest_only(digest_only);
    return env_.network->Send(sender, std::move(reply));
  }
  const ReadAnswer to{sender, request_id, digest_only, rounds_.InProgress(read.table(), read.partition_key()),
                      purge_horizon_(read.table(), TokenOf(read.partition_key()))};
  if (read.limit() == 0 || !read.range()) {
    return ScanPartitionRows(*env_.storage, read.table(), read.partition_key(), {{std::move(begin), std::move(end)}},
                             [this, to](absl::StatusOr<std::vector<KeyValue>> stored) {
                               Answer(to, std::move(stored), std::nullopt);
                             });
  }
  ScanPartitionRowsUpTo(*env_.storage, read.table(), read.partition_key(), std::move(begin), std::move(end),
                        read.limit(), env_.buggify->Fires("replica.limited_read_first_scan_tiny"),
                        [this, to](absl::StatusOr<RowsUpTo> rows) {
                          if (!rows.ok()) return Answer(to, rows.status(), std::nullopt);
                          if (rows->read_through) CHARYBDIS_PROBE(env_.probes, "replica.read_stopped_at_limit");
                          Answer(to, std::move(rows->entries), std::move(rows->read_through));
                        });
}

void Replica::Answer(const ReadAnswer& to, absl::StatusOr<std::vector<KeyValue>> stored,
                     std::optional<std::string> read_through) {
  Envelope reply;
  ReplicaReadResponse* response = reply.mutable_replica_read_response();
  response->set_request_id(to.request_id);
  response->set_digest_only(to.digest_only);
  response->set_paxos_in_progress(to.paxos_in_progress);
  absl::StatusOr<Partition> data = ServablePartition(env_, metrics_, std::move(stored), to.purge_before);
  if (data.ok()) {
    response->set_ok(true);
    if (read_through) {
      response->set_cut(true);
      response->set_read_through(*read_through);
    }
    if (to.digest_only) {
      response->set_digest(Digest(*data, read_through));
    } else {
      data->ToProto(response->mutable_data());
    }
  }
  SendPerhapsTwice(env_, "replica.read_response_duplicate", to.sender, std::move(reply));
}

void Replica::OnScan(const Envelope& message) {
  const ScanOp& scan = message.replica_scan().scan();
  const Address sender = SenderOf(message);
  const uint64_t request_id = message.replica_scan().request_id();
  if (Fenced(message.replica_scan().topology_version())) {
    // As a read: this replica may no longer get the writes of some of the
    // scan's ranges, and which others do the coordinator's topology is too
    // old to say.
    CHARYBDIS_PROBE(env_.probes, "replica.scan_fenced");
    Envelope reply;
    reply.mutable_replica_scan_response()->set_request_id(request_id);
    reply.mutable_replica_scan_response()->set_fence(fence_);
    return env_.network->Send(sender, std::move(reply));
  }
  // Taken before the storage scan, as a read takes its flag.
  std::optional<std::vector<std::string>> in_progress =
      rounds_.InProgressIn(scan.table(), scan.start_token(), scan.end_token());
  if (!in_progress) {
    // Its Paxos state is not loaded yet: which rounds it must let the
    // coordinator finish is unknown, so it vouches for no rows.
    CHARYBDIS_PROBE(env_.probes, "replica.scan_before_paxos_loaded");
    Envelope reply;
    reply.mutable_replica_scan_response()->set_request_id(request_id);
    reply.mutable_replica_scan_response()->set_ok(false);
    return env_.network->Send(sender, std::move(reply));
  }
  ScanShardRows(*env_.storage, scan, [this, sender, request_id, table = scan.table(), in_progress = std::move(*in_progress)](
                                         absl::StatusOr<ShardScanResult> result) {
    Envelope reply;
    ReplicaScanResponse* response = reply.mutable_replica_scan_response();
    response->set_request_id(request_id);
    response->set_ok(result.ok());
    for (const std::string& partition_key : in_progress) response->add_paxos_in_progress(partition_key);
    if (result.ok()) {
      response->set_exhausted(result->exhausted);
      if (!result->exhausted && !result->entries.empty()) {
        // Not exhausted: the limit was reached, so the last row is whole.
        const std::optional<storage_codec::StoredRow> last = storage_codec::RowOfKey(result->entries.back().key);
        response->set_ok(last.has_value());
        if (last) {
          response->set_last_token(last->token);
          response->set_last_partition_key(last->partition_key);
          response->set_last_clustering_key(last->clustering_key);
        }
      }
      for (auto& [partition_key, entries] : GroupByPartition(std::move(result->entries))) {
        absl::StatusOr<Partition> data =
            ServablePartition(env_, metrics_, std::move(entries), purge_horizon_(table, TokenOf(partition_key)));
        if (!data.ok()) {
          response->set_ok(false);  // a replica never serves bytes it cannot vouch for
          break;
        }
        PartitionData* partition = response->add_partitions();
        data->ToProto(partition);
        partition->set_table(table);
        partition->set_partition_key(partition_key);
      }
    }
    if (!response->ok()) response->clear_partitions();
    SendPerhapsTwice(env_, "replica.scan_response_duplicate", sender, std::move(reply));
  });
}

}  // namespace charybdis
