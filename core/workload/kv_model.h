#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/env/random.h"
#include "core/workload/history.h"
#include "proto/client.pb.h"
#include "proto/scenario.pb.h"

namespace charybdis {

// The kv workload's client, once for both runtimes (as FoundationDB's
// workloads run in simulation and against real clusters): which operation
// comes next, the request that performs it, and what its answer means.
// sim/kv_workload.cc and node/ctl/real_workload.cc add only how requests
// travel and how time passes.

struct KvOperation {
  HistoryOp::Function function = HistoryOp::Function::kRead;
  std::string key;
  ConsistencyLevel consistency = CL_UNSET;
  bool lwt = false;                     // through Paxos (cas, or lwt_writes)
  bool partition_delete = false;        // a delete of the whole partition
  std::optional<std::string> expected;  // cas: nullopt for IF NOT EXISTS
  std::string value;                    // writes and cas: the value written
};

// What one client remembers between its operations.
struct KvClientMemory {
  uint32_t index = 0;       // its number in the workload
  uint32_t sweep_next = 0;  // sweep_keys and preload_keys: the next key
  uint64_t fresh_keys = 0;  // key_count 0: keys made so far
  std::vector<std::string> written;  // key_count 0: keys it wrote
  // The value it last saw for each key (nullopt: none), for `IF v = `.
  std::map<std::string, std::optional<std::string>> last_seen;
};

// A sweep reads (or preloads) every key once instead of drawing.
inline bool Sweeps(const scenario::KvWorkload& spec) { return spec.sweep_keys() || spec.preload_keys(); }

// The serial level of the workload's LWTs.
ConsistencyLevel SerialLevelOf(const scenario::KvWorkload& spec);

// The next operation of a client that draws its operations (not
// lock-step); its value comes from KvValue when it is sent.
KvOperation NextKvOperation(const scenario::KvWorkload& spec, const std::string& workload,
                            KvClientMemory& memory, Random& random);

// The value a write carries: unique per workload, client and request,
// padded to the workload's value_bytes.
std::string KvValue(const scenario::KvWorkload& spec, const std::string& workload, uint32_t client,
                    uint64_t request);

// The request that performs `op` on the workload's table and column;
// `client_timestamp_us` > 0 is a USING TIMESTAMP for a plain write.
ClientRequest KvRequest(const std::string& table, const std::string& column, const KvOperation& op,
                        int64_t client_timestamp_us);

// The history event of `op` by `process` on `table`: its invocation, or
// (type ok, fail or info) the start of its completion, which the answer
// fills in. Writes and cas carry their value in both; a read's value is
// only what it read. The runtime adds the time and where it stands.
HistoryOp KvHistoryEvent(const KvOperation& op, uint64_t process, HistoryOp::Type type,
                         const std::string& table);

// What an answer's code means for the history: ok, fail (no effect) or
// info (it may have taken effect).
HistoryOp::Type KvOutcome(ClientResponse::Code code);

// Fills in an ok completion from its answer (the timestamp, the value
// read, whether a cas applied) and what the client now believes the key
// holds.
void ReadKvAnswer(const scenario::KvWorkload& spec, const std::string& column, const KvOperation& op,
                  const ClientResponse& response, HistoryOp& completion, KvClientMemory& memory);

}  // namespace charybdis
