#include "core/topology/node_cleanup.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "core/env/client_address.h"
#include "core/topology/cleanup_plan.h"

namespace charybdis::topology {

NodeCleanup::NodeCleanup(ShardEnv env, uint32_t shards, const TopologyLog& log, std::function<bool()> current)
    : env_(env), shards_(shards), log_(log), current_(std::move(current)) {
  CHARYBDIS_ASSERT(env_.self.shard == 0 && shards_ >= 1 && current_ != nullptr);
}

void NodeCleanup::OnRequest(const Envelope& message) {
  CHARYBDIS_ASSERT(message.client_request().has_cleanup());
  const Address client = ClientAddressOf(message);
  const uint64_t request_id = message.client_request().request_id();
  ClientResponse refusal;
  if (running_.has_value()) {
    refusal.set_code(ClientResponse::INVALID_REQUEST);
    refusal.set_message(absl::StrCat("node ", env_.self.node, " is already cleaning up"));
    return AnswerClient(*env_.network, client, request_id, std::move(refusal));
  }
  // A node behind its peers could miss an operation that makes it gain
  // ranges, and remove what it is being sent.
  if (!current_()) {
    refusal.set_code(ClientResponse::UNAVAILABLE);
    refusal.set_message(absl::StrCat("node ", env_.self.node,
                                     " is catching up with its peers' topology log: try again"));
    return AnswerClient(*env_.network, client, request_id, std::move(refusal));
  }
  if (absl::Status cleanable = CheckCleanable(log_.topology(), env_.self.node); !cleanable.ok()) {
    CHARYBDIS_PROBE(env_.probes, "cleanup.refused");
    refusal.set_code(ClientResponse::INVALID_REQUEST);
    refusal.set_message(std::string(cleanable.message()));
    return AnswerClient(*env_.network, client, request_id, std::move(refusal));
  }
  CHARYBDIS_PROBE(env_.probes, "cleanup.started");
  running_ = Running{client, request_id, ++last_id_};
  for (ShardId shard = 0; shard < shards_; shard++) {
    running_->waiting.insert(shard);
    Envelope request;
    request.mutable_shard_cleanup()->set_request_id(running_->id);
    request.mutable_shard_cleanup()->set_topology_version(log_.topology().version());
    env_.network->Send(Address{env_.self.node, shard}, std::move(request));
  }
}

void NodeCleanup::OnShardDone(const Envelope& message) {
  CHARYBDIS_ASSERT(message.from_node() == env_.self.node && message.from_shard() < shards_);
  const ShardCleanupDone& done = message.shard_cleanup_done();
  if (!running_.has_value() || done.request_id() != running_->id) return;  // a cleanup before a restart
  if (running_->waiting.erase(message.from_shard()) == 0) return;          // a duplicate
  running_->pairs += done.pairs();
  running_->bytes += done.bytes();
  if (!done.ok() && running_->error.empty()) running_->error = done.error();
  if (!running_->waiting.empty()) return;
  ClientResponse response;
  response.set_cleanup_pairs(running_->pairs);
  response.set_cleanup_bytes(running_->bytes);
  if (!running_->error.empty()) {
    // What the shards removed stays removed; the rest waits for a rerun.
    response.set_code(ClientResponse::INVALID_REQUEST);
    response.set_message(absl::StrCat("cleanup stopped after removing ", running_->pairs,
                                      " pairs: ", running_->error));
  } else {
    CHARYBDIS_PROBE(env_.probes, "cleanup.done");
  }
  const Address client = running_->client;
  const uint64_t request_id = running_->client_request_id;
  running_.reset();
  AnswerClient(*env_.network, client, request_id, std::move(response));
}

}  // namespace charybdis::topology
