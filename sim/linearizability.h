#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace charybdis::sim {

// One operation on a register, for the linearizability checker. Values are
// optional: nullopt is "absent" (never written, or deleted).
struct RegisterOp {
  enum class Kind { kRead, kWrite, kCas };
  // ok: happened with this result; fail: definitely had no effect; info:
  // unknown (it may have taken effect at any time after its call, or never).
  enum class Outcome { kOk, kFail, kInfo };

  Kind kind = Kind::kRead;
  Outcome outcome = Outcome::kOk;
  std::string key;
  uint64_t process = 0;
  // Positions in real time (any increasing numbering, e.g. history index):
  // the call, and for ok operations the return.
  uint64_t call = 0;
  uint64_t ret = 0;
  // read (ok): the value read; write: the value written; cas: the new value.
  std::optional<std::string> value;
  // cas: the value required (nullopt: the register must be absent).
  std::optional<std::string> expected;
  // cas (ok): whether it applied.
  bool applied = false;
};

struct LinearizabilityResult {
  bool linearizable = true;
  // The search gave up on some key (too many states): no verdict there.
  bool exhausted = false;
  uint64_t keys = 0;
  uint64_t operations = 0;  // checked (fail operations and info reads drop out)
  std::string detail;       // the first key found not linearizable, and why
};

// Checks each key's history independently (linearizability is
// compositional) as a register (sim/linearization_search.h). Every
// register starts absent.
// `max_states` bounds the memo per key.
LinearizabilityResult CheckLinearizable(const std::vector<RegisterOp>& operations,
                                        uint64_t max_states = 2'000'000);

}  // namespace charybdis::sim
