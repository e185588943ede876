#include "core/request/consistency.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"

namespace charybdis {

const char* ConsistencyName(ConsistencyLevel level) {
  switch (level) {
    case CL_ANY: return "ANY";
    case CL_ONE: return "ONE";
    case CL_TWO: return "TWO";
    case CL_THREE: return "THREE";
    case CL_QUORUM: return "QUORUM";
    case CL_ALL: return "ALL";
    case CL_LOCAL_QUORUM: return "LOCAL_QUORUM";
    case CL_EACH_QUORUM: return "EACH_QUORUM";
    case CL_LOCAL_ONE: return "LOCAL_ONE";
    case CL_SERIAL: return "SERIAL";
    case CL_LOCAL_SERIAL: return "LOCAL_SERIAL";
    default: return "UNSET";
  }
}

absl::Status ValidForWrite(ConsistencyLevel level) {
  if (!ConsistencyLevel_IsValid(level)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown consistency level ", level));
  }
  switch (level) {
    case CL_UNSET:
      return absl::InvalidArgumentError("a write needs a consistency level");
    case CL_SERIAL:
    case CL_LOCAL_SERIAL:
      return absl::InvalidArgumentError(absl::StrCat(
          ConsistencyName(level), " is for conditional updates and serial reads, not plain writes"));
    default:
      return absl::OkStatus();
  }
}

absl::Status ValidForRead(ConsistencyLevel level) {
  if (!ConsistencyLevel_IsValid(level)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown consistency level ", level));
  }
  switch (level) {
    case CL_UNSET:
      return absl::InvalidArgumentError("a read needs a consistency level");
    case CL_ANY:
      return absl::InvalidArgumentError("ANY is for writes only; reads need at least ONE");
    case CL_EACH_QUORUM:
      // ScyllaDB's choice (Cassandra allows it): reads use LOCAL_QUORUM or QUORUM.
      return absl::InvalidArgumentError("EACH_QUORUM is for writes only");
    default:
      return absl::OkStatus();  // SERIAL and LOCAL_SERIAL read through Paxos
  }
}

bool IsSerial(ConsistencyLevel level) { return level == CL_SERIAL || level == CL_LOCAL_SERIAL; }

Requirement::Requirement(ConsistencyLevel level, std::shared_ptr<const TokenRing> ring,
                         const std::string& local_datacenter)
    : level_(level), ring_(std::move(ring)), local_datacenter_(local_datacenter) {
  CHARYBDIS_ASSERT(ring_ != nullptr);
  const ClusterLayout& layout = ring_->layout();
  const bool simple = layout.replication.strategy == ReplicationConfig::Strategy::kSimple;
  const uint32_t all = ring_->total_replication_factor();
  const uint32_t local = simple ? all : ring_->ReplicationFactorIn(local_datacenter);
  switch (level) {
    case CL_ANY:
    case CL_ONE: blocked_for_ = 1; break;
    case CL_TWO: blocked_for_ = 2; break;
    case CL_THREE: blocked_for_ = 3; break;
    case CL_QUORUM: blocked_for_ = all / 2 + 1; break;
    case CL_ALL: blocked_for_ = all; break;
    case CL_LOCAL_ONE:
      blocked_for_ = 1;
      local_only_ = !simple;
      break;
    case CL_LOCAL_QUORUM:
      blocked_for_ = local / 2 + 1;
      local_only_ = !simple;
      break;
    case CL_EACH_QUORUM:
      if (simple) {
        blocked_for_ = all / 2 + 1;
        break;
      }
      for (const auto& [datacenter, factor] : layout.replication.per_datacenter) {
        if (factor == 0) continue;
        per_datacenter_[datacenter] = factor / 2 + 1;
        blocked_for_ += factor / 2 + 1;
      }
      break;
    default:
      CHARYBDIS_ASSERT(false && "validated before: no requirement for this level");
  }
  // The ring's replication factor is >= 1, so every level waits for one answer.
  CHARYBDIS_ASSERT(blocked_for_ >= 1);
  CHARYBDIS_ASSERT(per_datacenter_.empty() || level == CL_EACH_QUORUM);
  CHARYBDIS_ASSERT(!local_only_ || !simple);
}

void Requirement::AddPending(const std::vector<NodeId>& pending, std::shared_ptr<const TokenRing> after) {
  CHARYBDIS_ASSERT(after != nullptr);
  CHARYBDIS_ASSERT(after_ == nullptr);  // once
  after_ = std::move(after);
  if (level_ == CL_ANY) return;  // a hint anywhere still serves
  const uint32_t before = blocked_for_;
  for (NodeId replica : pending) {
    if (!Counts(replica)) continue;
    blocked_for_++;
    if (!per_datacenter_.empty()) per_datacenter_[DatacenterOf(replica)]++;
  }
  CHARYBDIS_ASSERT(blocked_for_ >= before);
  CHARYBDIS_ASSERT(blocked_for_ <= before + pending.size());
}

void Requirement::AlsoAmong(std::shared_ptr<const TokenRing> after, std::vector<NodeId> after_replicas) {
  CHARYBDIS_ASSERT(among_after_ == nullptr);  // once
  CHARYBDIS_ASSERT(!after_replicas.empty());
  among_after_ = std::make_shared<const Requirement>(level_, std::move(after), local_datacenter_);
  after_replicas_ = std::move(after_replicas);
}

std::vector<NodeId> Requirement::AnsweredAfter(const std::vector<NodeId>& answered) const {
  std::vector<NodeId> among;
  for (NodeId replica : answered) {
    if (std::find(after_replicas_.begin(), after_replicas_.end(), replica) != after_replicas_.end()) {
      among.push_back(replica);
    }
  }
  return among;
}

const std::string& Requirement::DatacenterOf(NodeId replica) const {
  if (const NodeInfo* natural = ring_->layout().Find(replica)) return natural->datacenter;
  CHARYBDIS_ASSERT(after_ != nullptr);  // not a replica of the ring: a pending one
  return after_->layout().node(replica).datacenter;
}

bool Requirement::Counts(NodeId replica) const {
  return !local_only_ || DatacenterOf(replica) == local_datacenter_;
}

uint32_t Requirement::Counted(const std::vector<NodeId>& answered) const {
  uint32_t counted = 0;
  for (NodeId replica : answered) counted += Counts(replica);
  CHARYBDIS_ASSERT(counted <= answered.size());
  return counted;
}

bool Requirement::SatisfiedBy(const std::vector<NodeId>& answered) const {
  CHARYBDIS_ASSERT(blocked_for_ >= 1);
  if (among_after_ != nullptr && !among_after_->SatisfiedBy(AnsweredAfter(answered))) return false;
  if (per_datacenter_.empty()) return Counted(answered) >= blocked_for_;
  std::map<std::string, uint32_t> per_datacenter;
  for (NodeId replica : answered) per_datacenter[DatacenterOf(replica)]++;
  for (const auto& [datacenter, needed] : per_datacenter_) {
    if (per_datacenter[datacenter] < needed) return false;
  }
  return true;
}

ConsistencyLevel SerialOrDefault(ConsistencyLevel level) {
  const ConsistencyLevel serial = level == CL_UNSET ? CL_SERIAL : level;
  CHARYBDIS_ASSERT(IsSerial(serial));
  return serial;
}

ClientResponse Unavailable(ConsistencyLevel level, uint32_t alive, uint32_t blocked_for, const char* why) {
  CHARYBDIS_ASSERT(why != nullptr);
  CHARYBDIS_ASSERT(alive < blocked_for);
  ClientResponse response;
  response.set_code(ClientResponse::UNAVAILABLE);
  response.set_consistency(level);
  response.set_alive(alive);
  response.set_blocked_for(blocked_for);
  response.set_message(why);
  return response;
}

ClientResponse Unplaceable(ConsistencyLevel level, const absl::Status& why) {
  CHARYBDIS_ASSERT(!why.ok());
  ClientResponse response = Unavailable(level, 0, 1, "the topology cannot place the replication");
  response.set_message(absl::StrCat(response.message(), ": ", why.message()));
  return response;
}

}  // namespace charybdis
