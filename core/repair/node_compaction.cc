#include "core/repair/node_compaction.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "core/env/client_address.h"

namespace charybdis::repair {

NodeCompaction::NodeCompaction(ShardEnv env, uint32_t shards, Tables tables, Nanos interval)
    : env_(env), shards_(shards), tables_(std::move(tables)), interval_(interval) {
  CHARYBDIS_ASSERT(env_.self.shard == 0 && shards_ >= 1 && tables_ != nullptr && interval_ > 0);
}

void NodeCompaction::Start() { env_.clock->After(interval_, [this] { OnInterval(); }); }

void NodeCompaction::OnInterval() {
  // One asked for meanwhile counts as this interval's.
  if (!running_.has_value()) {
    CHARYBDIS_PROBE(env_.probes, "gc.compaction_of_its_own");
    Run(std::nullopt, 0, CompactOp());
  }
  env_.clock->After(interval_, [this] { OnInterval(); });
}

void NodeCompaction::OnRequest(const Envelope& message) {
  CHARYBDIS_ASSERT(message.client_request().has_compact());
  const Address client = ClientAddressOf(message);
  const uint64_t request_id = message.client_request().request_id();
  const CompactOp& request = message.client_request().compact();
  std::string refused;
  if (running_.has_value() && running_->client.has_value()) {
    refused = absl::StrCat("node ", env_.self.node, " is already compacting");
  } else if (!request.table().empty() && request.keyspace().empty()) {
    refused = "a table to compact needs its keyspace";
  } else if (!request.keyspace().empty() && tables_(request).empty()) {
    refused = request.table().empty()
                  ? absl::StrCat("keyspace '", request.keyspace(), "' has no table")
                  : absl::StrCat("keyspace '", request.keyspace(), "' has no table '", request.table(), "'");
  }
  if (!refused.empty()) {
    ClientResponse refusal;
    refusal.set_code(ClientResponse::INVALID_REQUEST);
    refusal.set_message(refused);
    return AnswerClient(*env_.network, client, request_id, std::move(refusal));
  }
  if (running_.has_value()) {
    // The node's own, of every table: it answers this one too.
    running_->client = client;
    running_->client_request_id = request_id;
    return;
  }
  Run(client, request_id, request);
}

void NodeCompaction::Run(std::optional<Address> client, uint64_t client_request_id, const CompactOp& request) {
  CHARYBDIS_ASSERT(!running_.has_value());
  running_ = Running{client, client_request_id, ++last_id_};
  for (ShardId shard = 0; shard < shards_; shard++) {
    running_->waiting.insert(shard);
    Envelope message;
    message.mutable_shard_compact()->set_request_id(running_->id);
    *message.mutable_shard_compact()->mutable_compact() = request;
    env_.network->Send(Address{env_.self.node, shard}, std::move(message));
  }
}

void NodeCompaction::OnShardDone(const Envelope& message) {
  CHARYBDIS_ASSERT(message.from_node() == env_.self.node && message.from_shard() < shards_);
  const ShardCompactDone& done = message.shard_compact_done();
  if (!running_.has_value() || done.request_id() != running_->id) return;  // a compaction before a restart
  if (running_->waiting.erase(message.from_shard()) == 0) return;          // a duplicate
  running_->pairs += done.pairs();
  running_->bytes += done.bytes();
  running_->paxos_states += done.paxos_states();
  if (!done.ok() && running_->error.empty()) running_->error = done.error();
  if (!running_->waiting.empty()) return;
  ClientResponse response;
  response.set_compacted_pairs(running_->pairs);
  response.set_compacted_bytes(running_->bytes);
  response.set_compacted_paxos_states(running_->paxos_states);
  if (!running_->error.empty()) {
    response.set_code(ClientResponse::INVALID_REQUEST);
    response.set_message(absl::StrCat("compaction stopped after deleting ", running_->pairs, " pairs: ",
                                      running_->error));
  }
  const std::optional<Address> client = running_->client;
  const uint64_t request_id = running_->client_request_id;
  running_.reset();
  if (client.has_value()) AnswerClient(*env_.network, *client, request_id, std::move(response));
}

}  // namespace charybdis::repair
