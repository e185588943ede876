#include "sim/linearizability.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "core/env/random.h"

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"

namespace charybdis::sim {

namespace {

// Values interned per key: 0 is absent.
using State = uint32_t;
constexpr State kAbsent = 0;

struct Op {
  RegisterOp::Kind kind;
  bool definite;  // ok (must be linearized) rather than info
  State value;
  State expected;
  bool applied;
};

// An entry of the doubly linked list of calls and returns.
struct Entry {
  bool is_call;
  size_t op;
  uint64_t time;
  size_t match;  // the entry index of the same op's return (for calls)
  size_t prev;
  size_t next;
};

constexpr size_t kNone = std::numeric_limits<size_t>::max();

// Applies `op` to `state`: whether it is consistent, and the new state.
std::pair<bool, State> Step(const Op& op, State state) {
  switch (op.kind) {
    case RegisterOp::Kind::kRead:
      return {state == op.value, state};
    case RegisterOp::Kind::kWrite:
      return {true, op.value};
    case RegisterOp::Kind::kCas: {
      const bool matches = state == op.expected;
      if (!op.definite) return {true, matches ? op.value : state};
      if (op.applied) return {matches, matches ? op.value : state};
      return {!matches, state};
    }
  }
  return {false, state};
}

class KeyChecker {
 public:
  KeyChecker(const std::vector<const RegisterOp*>& history, uint64_t max_states)
      : max_states_(max_states) {
    std::map<std::string, State> interned;
    auto intern = [&](const std::optional<std::string>& value) -> State {
      if (!value) return kAbsent;
      return interned.emplace(*value, static_cast<State>(interned.size() + 1)).first->second;
    };
    std::vector<std::pair<uint64_t, std::pair<int, size_t>>> events;  // time, (return first, op)
    for (const RegisterOp* op : history) {
      const size_t index = ops_.size();
      ops_.push_back(Op{op->kind, op->outcome == RegisterOp::Outcome::kOk, intern(op->value),
                        intern(op->expected), op->applied});
      definite_ += ops_.back().definite;
      // Unknown outcomes never return: their returns go after everything.
      const uint64_t ret = ops_.back().definite ? op->ret : std::numeric_limits<uint64_t>::max();
      CHARYBDIS_ASSERT(!ops_.back().definite || op->ret > op->call);
      events.push_back({op->call, {1, index}});
      events.push_back({ret, {0, index}});
    }
    std::sort(events.begin(), events.end());
    std::vector<size_t> call_entry(ops_.size()), return_entry(ops_.size());
    for (const auto& [time, kind_op] : events) {
      const bool is_call = kind_op.first == 1;
      (is_call ? call_entry : return_entry)[kind_op.second] = entries_.size();
      entries_.push_back(Entry{is_call, kind_op.second, time, kNone, kNone, kNone});
    }
    for (size_t i = 0; i < entries_.size(); i++) {
      entries_[i].prev = i == 0 ? kNone : i - 1;
      entries_[i].next = i + 1 == entries_.size() ? kNone : i + 1;
      if (entries_[i].is_call) entries_[i].match = return_entry[entries_[i].op];
    }
    head_ = entries_.empty() ? kNone : 0;
  }

  // true: linearizable; false: not; nullopt: gave up.
  std::optional<bool> Run() {
    std::vector<uint64_t> linearized((ops_.size() + 63) / 64, 0);
    // Zobrist hashing: each operation has a random word, a set's hash is
    // the XOR of its members' words, updated in O(1). The memo compares
    // (hash, state) first and whole sets only on a tie.
    std::vector<uint64_t> zobrist(ops_.size());
    Random random(0x6c696e656172ULL);
    for (uint64_t& word : zobrist) word = random.Next();
    uint64_t hash = 0;
    std::set<std::tuple<uint64_t, State, std::vector<uint64_t>>> seen;
    struct Frame {
      size_t entry;
      State state;
    };
    std::vector<Frame> stack;
    State state = kAbsent;
    size_t done = 0;
    size_t entry = head_;
    while (done < definite_) {
      CHARYBDIS_ASSERT(entry != kNone);
      const Entry& current = entries_[entry];
      if (current.is_call) {
        const auto [consistent, next_state] = Step(ops_[current.op], state);
        bool fresh = false;
        if (consistent) {
          linearized[current.op / 64] |= uint64_t{1} << (current.op % 64);
          fresh = seen.emplace(hash ^ zobrist[current.op], next_state, linearized).second;
          if (fresh) {
            hash ^= zobrist[current.op];
          } else {
            linearized[current.op / 64] &= ~(uint64_t{1} << (current.op % 64));
          }
        }
        if (fresh) {
          if (seen.size() > max_states_) return std::nullopt;
          stack.push_back(Frame{entry, state});
          state = next_state;
          done += ops_[current.op].definite;
          Lift(entry);
          entry = head_;
        } else {
          entry = current.next;
        }
        continue;
      }
      // A return reached before its operation was linearized: backtrack.
      if (stack.empty()) return false;
      const Frame frame = stack.back();
      stack.pop_back();
      const size_t op = entries_[frame.entry].op;
      linearized[op / 64] &= ~(uint64_t{1} << (op % 64));
      hash ^= zobrist[op];
      done -= ops_[op].definite;
      state = frame.state;
      Unlift(frame.entry);
      entry = entries_[frame.entry].next;
    }
    return true;
  }

  size_t size() const { return ops_.size(); }

 private:
  void Remove(size_t i) {
    Entry& e = entries_[i];
    if (e.prev == kNone) {
      head_ = e.next;
    } else {
      entries_[e.prev].next = e.next;
    }
    if (e.next != kNone) entries_[e.next].prev = e.prev;
  }
  void Restore(size_t i) {
    Entry& e = entries_[i];
    if (e.prev == kNone) {
      head_ = i;
    } else {
      entries_[e.prev].next = i;
    }
    if (e.next != kNone) entries_[e.next].prev = i;
  }
  // Takes a call and its return out of the list (and puts them back in the
  // reverse order: the links they kept still point at their neighbours).
  void Lift(size_t call) {
    Remove(call);
    Remove(entries_[call].match);
  }
  void Unlift(size_t call) {
    Restore(entries_[call].match);
    Restore(call);
  }

  uint64_t max_states_;
  std::vector<Op> ops_;
  size_t definite_ = 0;
  std::vector<Entry> entries_;
  size_t head_ = kNone;
};

}  // namespace

LinearizabilityResult CheckLinearizable(const std::vector<RegisterOp>& operations,
                                        uint64_t max_states) {
  std::map<std::string, std::vector<const RegisterOp*>> by_key;
  for (const RegisterOp& op : operations) {
    if (op.outcome == RegisterOp::Outcome::kFail) continue;  // no effect
    // A read with an unknown outcome tells nothing.
    if (op.outcome == RegisterOp::Outcome::kInfo && op.kind == RegisterOp::Kind::kRead) continue;
    by_key[op.key].push_back(&op);
  }
  LinearizabilityResult result;
  for (const auto& [key, history] : by_key) {
    KeyChecker checker(history, max_states);
    result.keys++;
    result.operations += checker.size();
    const std::optional<bool> verdict = checker.Run();
    if (!verdict) {
      result.exhausted = true;
      absl::StrAppend(&result.detail, result.detail.empty() ? "" : "; ", "key ", key,
                      ": gave up after ", max_states, " states");
    } else if (!*verdict && result.linearizable) {
      result.linearizable = false;
      absl::StrAppend(&result.detail, result.detail.empty() ? "" : "; ", "key ", key, ": ",
                      history.size(), " operations admit no linearization");
    }
  }
  return result;
}

}  // namespace charybdis::sim
