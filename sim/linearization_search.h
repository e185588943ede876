#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace charybdis::sim {

// The search at the heart of every linearizability check: Wing and Gong's,
// as improved by Lowe and used by Porcupine. Take operations in real-time
// order, try to linearize each pending one, backtrack when a return is
// reached before its operation was linearized, and memoize the (set of
// linearized operations, state) pairs already explored. What an operation
// does to the state, and whether its recorded result allows it, is the
// model's (a register, a partition of rows).

// One operation's place in real time (any increasing numbering).
struct TimedOp {
  uint64_t call = 0;
  uint64_t ret = 0;  // definite operations only
  // Definite: it happened, and must be linearized. Otherwise its outcome is
  // unknown: it may take effect at any time after its call, or never.
  bool definite = true;
};

// A deterministic state machine whose states are small numbers; state 0
// is the initial one.
class SearchModel {
 public:
  virtual ~SearchModel() = default;
  // Operation `op` applied in state `state`: nullopt if its recorded result
  // rules that out, else the state after it.
  virtual std::optional<uint32_t> Step(size_t op, uint32_t state) = 0;
};

// true: a linearization exists; false: none does; nullopt: the memo grew
// beyond `max_states` and the search gave up. When none does and `stuck`
// is given, it gets the first definite operation (by call) left out of
// the longest partial linearization found: where the history stops
// making sense, as Porcupine shows it.
std::optional<bool> SearchLinearization(const std::vector<TimedOp>& ops, SearchModel& model,
                                        uint64_t max_states, size_t* stuck = nullptr);

}  // namespace charybdis::sim
