#include "core/request/consistency.h"

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

Requirement::Requirement(ConsistencyLevel level, const TokenRing& ring,
                         const std::string& local_datacenter)
    : level_(level), layout_(ring.layout()), local_datacenter_(local_datacenter) {
  const bool simple = layout_.replication.strategy == ReplicationConfig::Strategy::kSimple;
  const uint32_t all = ring.total_replication_factor();
  const uint32_t local = simple ? all : ring.ReplicationFactorIn(local_datacenter);
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
      for (const auto& [datacenter, factor] : layout_.replication.per_datacenter) {
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

bool Requirement::Counts(NodeId replica) const {
  return !local_only_ || layout_.node(replica).datacenter == local_datacenter_;
}

uint32_t Requirement::Counted(const std::vector<NodeId>& answered) const {
  uint32_t counted = 0;
  for (NodeId replica : answered) counted += Counts(replica);
  CHARYBDIS_ASSERT(counted <= answered.size());
  return counted;
}

bool Requirement::SatisfiedBy(const std::vector<NodeId>& answered) const {
  CHARYBDIS_ASSERT(blocked_for_ >= 1);
  if (per_datacenter_.empty()) return Counted(answered) >= blocked_for_;
  std::map<std::string, uint32_t> per_datacenter;
  for (NodeId replica : answered) per_datacenter[layout_.node(replica).datacenter]++;
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

}  // namespace charybdis
