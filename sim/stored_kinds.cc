#include "sim/stored_kinds.h"

#include <string>

#include "core/batchlog/batchlog.h"
#include "core/cluster/failure_detector.h"
#include "core/data/storage_codec.h"
#include "core/hints/hint_manager.h"
#include "core/paxos/acceptor.h"
#include "core/paxos/paxos_fences.h"
#include "core/schema/schema_agent.h"
#include "core/topology/topology_agent.h"

namespace charybdis::sim {

const char* StoredKindOf(std::string_view key) {
  if (key.starts_with(storage_codec::PaxosPrefix())) return "paxos state";
  if (key == Acceptor::kHorizonKeys[0] || key == Acceptor::kHorizonKeys[1] ||
      key.starts_with(PaxosFences::kKeyPrefix)) {
    return "paxos horizon and fences";
  }
  if (key == FailureDetector::kGenerationKey) return "generation";
  if (key.starts_with(HintManager::KeyPrefix())) return "hints";
  if (key.starts_with(Batchlog::EntryPrefix())) return "batch log";
  if (key == SchemaAgent::kLocalKey) return "schema log";
  if (key == topology::TopologyAgent::kLocalKey) return "topology log";
  if (storage_codec::RowOfKey(key)) return "data";
  return "other";
}

}  // namespace charybdis::sim
