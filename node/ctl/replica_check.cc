#include "node/ctl/replica_check.h"

#include <grpcpp/grpcpp.h>
#include <rocksdb/db.h>

#include <chrono>

#include <map>
#include <memory>

#include "absl/strings/str_cat.h"
#include "core/data/storage_codec.h"
#include "core/data/token.h"

namespace charybdis::node {

absl::StatusOr<TokenRing> OwnersRingOf(const LocalCluster& cluster, const ReplicationConfig& replication,
                                       uint32_t shards) {
  for (NodeId node : cluster.nodes()) {
    if (!cluster.Running(node)) continue;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    StatusResponse status;
    if (!cluster.Connect(node)->Status(&context, StatusRequest(), &status).ok()) continue;
    std::map<NodeId, std::vector<Token>> tokens;
    for (const RingEntry& entry : status.ring()) tokens[entry.node()].push_back(entry.token());
    ClusterLayout layout;
    layout.shards_per_node = shards;
    layout.replication = replication;
    for (const Member& member : status.member()) {
      if (tokens.count(member.id())) layout.nodes.push_back(NodeInfo{member.id(), member.datacenter(), member.rack()});
    }
    return TokenRing(layout, tokens);
  }
  return absl::UnavailableError("no node of the cluster answers its status");
}

ReplicaCheck CheckReplicasConverge(const LocalCluster& cluster, const TokenRing& ring,
                                   const std::string& table, uint32_t keys) {
  const uint32_t shards = ring.layout().shards_per_node;
  // Every shard's database, opened once, read-only.
  std::map<std::pair<NodeId, ShardId>, std::unique_ptr<rocksdb::DB>> databases;
  for (NodeId node : cluster.nodes()) {
    for (ShardId shard = 0; shard < shards; shard++) {
      const std::string path = absl::StrCat(cluster.data_directory(node), "/shard-", shard);
      rocksdb::DB* db = nullptr;
      const rocksdb::Status status = rocksdb::DB::OpenForReadOnly(rocksdb::Options(), path, &db);
      if (!status.ok()) return {false, absl::StrCat(path, ": ", status.ToString())};
      databases[{node, shard}].reset(db);
    }
  }
  uint32_t differing = 0;
  std::string first;
  for (uint32_t i = 0; i < keys; i++) {
    const std::string key = absl::StrCat("k", i);
    const Token token = TokenOf(key);
    const std::string prefix = storage_codec::PartitionPrefix(table, key);
    std::map<NodeId, Partition> held;
    for (NodeId node : ring.ReplicasOf(token)) {
      rocksdb::DB& db = *databases.at({node, ShardOf(token, shards)});
      std::vector<KeyValue> stored;
      std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(rocksdb::ReadOptions()));
      for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
        stored.push_back(KeyValue{it->key().ToString(), it->value().ToString()});
      }
      storage_codec::Decoded decoded = storage_codec::DecodeScan(stored);
      if (!decoded.corrupt_keys.empty()) {
        return {false, absl::StrCat("node ", node, " key ", key, ": ", decoded.corrupt_keys.size(),
                                    " stored versions fail their checksum")};
      }
      held[node] = std::move(decoded.partition);
    }
    for (const auto& [node, partition] : held) {
      if (partition == held.begin()->second) continue;
      differing++;
      if (first.empty()) first = absl::StrCat("key ", key, ": node ", node, " differs from node ", held.begin()->first);
      break;
    }
  }
  if (differing > 0) return {false, absl::StrCat(differing, " of ", keys, " keys differ between replicas; ", first)};
  return {true, absl::StrCat(keys, " keys identical on every replica")};
}

}  // namespace charybdis::node
