#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "proto/client.pb.h"

namespace charybdis::node {

// The operations of a run against real nodes, in the JSON-lines format of
// `charybdis sim --history_out` (docs/scenarios.md), so the simulator's
// checkers (`charybdis sim --check_history`) and any Jepsen-style checker
// read it. Times are nanoseconds since the recorder was made (steady
// clock). Any thread may record.
class HistoryRecorder {
 public:
  enum class Type { kInvoke, kOk, kFail, kInfo };
  enum class Function { kRead, kWrite, kDelete, kCas };

  struct Operation {
    uint64_t process = 0;
    Type type = Type::kInvoke;
    Function function = Function::kRead;
    std::string key;
    ConsistencyLevel consistency = CL_UNSET;
    // Writes and cas: the value written; ok reads: the value read (none:
    // absent). Cas: the expected value (none: IF NOT EXISTS).
    std::optional<std::string> value;
    std::optional<std::string> expected;
    bool applied = false;
    // Ok writes: their timestamp; ok reads: the newest timestamp read.
    int64_t timestamp = 0;
    int64_t time = 0;
    // Completions: the node called and the answering shard's life
    // (ClientResponse.coordinator_life; the shard itself is not known, its
    // life's random nonce tells shards apart).
    uint32_t coordinator_node = 0;
    uint64_t coordinator_life = 0;
  };

  HistoryRecorder() : start_(std::chrono::steady_clock::now()) {}

  // Stamps `op.time` and appends it.
  void Record(Operation op);
  size_t size() const;
  void WriteJson(std::ostream& out) const;

 private:
  const std::chrono::steady_clock::time_point start_;
  mutable std::mutex mutex_;
  std::vector<Operation> operations_;  // guarded by mutex_
};

}  // namespace charybdis::node
