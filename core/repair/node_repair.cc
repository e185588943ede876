#include "core/repair/node_repair.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "core/env/client_address.h"
#include "core/repair/repair_plan.h"
#include "core/repair/repair_summary.h"

namespace charybdis::repair {

NodeRepair::NodeRepair(ShardEnv env, uint32_t shards, const topology::TopologyLog& log, Tables tables,
                       std::function<bool()> current)
    : env_(env), shards_(shards), log_(log), tables_(std::move(tables)), current_(std::move(current)) {
  CHARYBDIS_ASSERT(env_.self.shard == 0 && shards_ >= 1 && tables_ != nullptr && current_ != nullptr);
}

absl::Status NodeRepair::Refusal(const RepairOp& request) const {
  if (running_.has_value()) {
    return absl::FailedPreconditionError(absl::StrCat("node ", env_.self.node, " is already repairing"));
  }
  // A node behind its peers could repair ranges among replicas that no
  // longer hold them, and call them repaired.
  if (!current_()) {
    return absl::UnavailableError(
        absl::StrCat("node ", env_.self.node, " is catching up with its peers' topology log: try again"));
  }
  if (absl::Status repairable = CheckRepairable(log_.topology(), env_.self.node); !repairable.ok()) {
    return repairable;
  }
  if (absl::Status valid = CheckRequest(log_.topology(), env_.self.node, request); !valid.ok()) return valid;
  if (!request.keyspace().empty() && TablesToRepair(tables_(), request).empty()) {
    return absl::InvalidArgumentError(
        request.table().empty()
            ? absl::StrCat("keyspace '", request.keyspace(), "' has no replicated table")
            : absl::StrCat("keyspace '", request.keyspace(), "' has no table '", request.table(), "'"));
  }
  return absl::OkStatus();
}

void NodeRepair::OnRequest(const Envelope& message) {
  CHARYBDIS_ASSERT(message.client_request().has_repair());
  const Address client = ClientAddressOf(message);
  const uint64_t request_id = message.client_request().request_id();
  const RepairOp& request = message.client_request().repair();
  if (absl::Status refusal = Refusal(request); !refusal.ok()) {
    CHARYBDIS_PROBE(env_.probes, "repair.refused");
    ClientResponse response;
    response.set_code(absl::IsUnavailable(refusal) ? ClientResponse::UNAVAILABLE : ClientResponse::INVALID_REQUEST);
    response.set_message(std::string(refusal.message()));
    return AnswerClient(*env_.network, client, request_id, std::move(response));
  }
  CHARYBDIS_PROBE(env_.probes, "repair.started");
  running_ = Running{client, request_id, ++last_id_};
  for (ShardId shard = 0; shard < shards_; shard++) {
    running_->waiting.insert(shard);
    Envelope shard_request;
    shard_request.mutable_shard_repair()->set_request_id(running_->id);
    shard_request.mutable_shard_repair()->set_topology_version(log_.topology().version());
    *shard_request.mutable_shard_repair()->mutable_repair() = request;
    env_.network->Send(Address{env_.self.node, shard}, std::move(shard_request));
  }
}

void NodeRepair::OnShardDone(const Envelope& message) {
  CHARYBDIS_ASSERT(message.from_node() == env_.self.node && message.from_shard() < shards_);
  const ShardRepairDone& done = message.shard_repair_done();
  if (!running_.has_value() || done.request_id() != running_->id) return;  // a repair before a restart
  if (running_->waiting.erase(message.from_shard()) == 0) return;          // a duplicate
  // Every shard goes through the same table ranges (each its own tokens
  // of them): a range is repaired once all shards repaired it.
  const uint64_t ranges = running_->waiting.size() + 1 == shards_
                              ? done.summary().ranges()
                              : std::min(running_->summary.ranges(), done.summary().ranges());
  AddRepairSummary(running_->summary, done.summary());
  running_->summary.set_ranges(ranges);
  if (!done.ok() && running_->error.empty()) running_->error = done.error();
  if (!running_->waiting.empty()) return;
  ClientResponse response;
  *response.mutable_repair() = running_->summary;
  if (!running_->error.empty()) {
    // What the shards repaired stays so; the rest waits for a rerun.
    response.set_code(ClientResponse::INVALID_REQUEST);
    response.set_message(absl::StrCat("repair stopped after ", running_->summary.ranges(),
                                      " ranges: ", running_->error));
  } else {
    CHARYBDIS_PROBE(env_.probes, "repair.done");
  }
  const Address client = running_->client;
  const uint64_t request_id = running_->client_request_id;
  running_.reset();
  AnswerClient(*env_.network, client, request_id, std::move(response));
}

}  // namespace charybdis::repair
