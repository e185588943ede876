#pragma once

// The sending side of streaming (docs/topology.md, "What a stream
// carries"): answers a StreamRequest with the next stored key-value pairs
// of a table's token range on this shard, as they are stored. Stateless:
// the receiver says where to go on from, so a restart of either side, a
// lost chunk or a duplicated request needs nothing here.

#include <functional>
#include <optional>
#include <string>

#include "core/data/token.h"
#include "core/env/shard_env.h"
#include "proto/messages.pb.h"

namespace charybdis {

// The keys of `table` whose tokens are in [start, end]: [begin, end).
struct StoredRange {
  std::string begin;
  std::string end;
};
StoredRange StoredRangeOf(const std::string& table, Token start, Token end);

// Every Paxos state of `table`: the keys a Paxos stream scans.
StoredRange PaxosStatesOf(const std::string& table);

// Whether `key` is the Paxos state of a partition of `table` whose token
// is in [start, end]: what a Paxos stream of that range carries (Paxos
// keys sort by partition key, so the range is no span of keys).
bool IsPaxosKeyInRange(const std::string& key, const std::string& table, Token start, Token end);

// Most pairs a chunk carries.
inline constexpr uint32_t kMaxStreamPairs = 512;

// What a Paxos stream sends of a stored state (Acceptor::StreamedView):
// nothing, or these bytes.
using StreamedPaxosView =
    std::function<std::optional<std::string>(const std::string& table, const std::string& key, const std::string& stored)>;

// `paxos_view`: nullptr while the acceptor cannot say (it is not Ready):
// a Paxos chunk then fails, and the receiver asks again.
void AnswerStreamRequest(ShardEnv& env, const Envelope& request, const StreamedPaxosView& paxos_view);

}  // namespace charybdis
