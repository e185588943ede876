#include "sim/linearization_search.h"

#include <algorithm>
#include <limits>
#include <set>
#include <tuple>
#include <utility>

#include "core/env/assert.h"
#include "core/env/random.h"

namespace charybdis::sim {

namespace {

constexpr size_t kNone = std::numeric_limits<size_t>::max();

// An entry of the doubly linked list of calls and returns.
struct Entry {
  bool is_call;
  size_t op;
  size_t match;  // the entry index of the same op's return (for calls)
  size_t prev;
  size_t next;
};

class Search {
 public:
  Search(const std::vector<TimedOp>& ops, SearchModel& model, uint64_t max_states)
      : ops_(ops), model_(model), max_states_(max_states) {
    std::vector<std::pair<uint64_t, std::pair<int, size_t>>> events;  // time, (return first, op)
    for (size_t index = 0; index < ops.size(); index++) {
      definite_ += ops[index].definite;
      CHARYBDIS_ASSERT(!ops[index].definite || ops[index].ret > ops[index].call);
      // Unknown outcomes never return: their returns go after everything.
      const uint64_t ret = ops[index].definite ? ops[index].ret : std::numeric_limits<uint64_t>::max();
      events.push_back({ops[index].call, {1, index}});
      events.push_back({ret, {0, index}});
    }
    std::sort(events.begin(), events.end());
    std::vector<size_t> return_entry(ops.size());
    for (const auto& [time, kind_op] : events) {
      if (kind_op.first == 0) return_entry[kind_op.second] = entries_.size();
      entries_.push_back(Entry{kind_op.first == 1, kind_op.second, kNone, kNone, kNone});
    }
    for (size_t i = 0; i < entries_.size(); i++) {
      entries_[i].prev = i == 0 ? kNone : i - 1;
      entries_[i].next = i + 1 == entries_.size() ? kNone : i + 1;
      if (entries_[i].is_call) entries_[i].match = return_entry[entries_[i].op];
    }
    head_ = entries_.empty() ? kNone : 0;
  }

  std::optional<bool> Run();
  // The first definite operation, by call, outside the longest partial
  // linearization seen.
  size_t Stuck() const;

 private:
  struct Frame {
    size_t entry;
    uint32_t state;
  };

  // Tries to linearize the call at `entry` now: whether it was new.
  bool TryLinearize(size_t entry);
  // Undoes the newest linearization; false when there is none.
  bool Backtrack(size_t& entry);

  void Remove(size_t i) {
    Entry& e = entries_[i];
    (e.prev == kNone ? head_ : entries_[e.prev].next) = e.next;
    if (e.next != kNone) entries_[e.next].prev = e.prev;
  }
  void Restore(size_t i) {
    Entry& e = entries_[i];
    (e.prev == kNone ? head_ : entries_[e.prev].next) = i;
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
  void Flip(size_t op) { linearized_[op / 64] ^= uint64_t{1} << (op % 64); }

  const std::vector<TimedOp>& ops_;
  SearchModel& model_;
  const uint64_t max_states_;
  size_t definite_ = 0;
  std::vector<Entry> entries_;
  size_t head_ = kNone;
  // The search's position: linearized operations (a bit set, hashed by
  // Zobrist: each operation a random word, the set their XOR), the state,
  // and the stack of choices made.
  std::vector<uint64_t> linearized_;
  std::vector<uint64_t> zobrist_;
  uint64_t hash_ = 0;
  uint32_t state_ = 0;
  size_t done_ = 0;
  std::vector<Frame> stack_;
  std::set<std::tuple<uint64_t, uint32_t, std::vector<uint64_t>>> seen_;
  size_t deepest_ = 0;  // the most definite operations linearized at once
  std::vector<uint64_t> deepest_set_;
};

bool Search::TryLinearize(size_t entry) {
  const size_t op = entries_[entry].op;
  const std::optional<uint32_t> next_state = model_.Step(op, state_);
  if (!next_state) return false;
  Flip(op);
  if (!seen_.emplace(hash_ ^ zobrist_[op], *next_state, linearized_).second) {
    Flip(op);
    return false;
  }
  hash_ ^= zobrist_[op];
  stack_.push_back(Frame{entry, state_});
  state_ = *next_state;
  done_ += ops_[op].definite;
  if (done_ > deepest_) {
    deepest_ = done_;
    deepest_set_ = linearized_;
  }
  Lift(entry);
  return true;
}

size_t Search::Stuck() const {
  size_t stuck = ops_.size();
  for (size_t op = 0; op < ops_.size(); op++) {
    const bool in = !deepest_set_.empty() && (deepest_set_[op / 64] >> (op % 64)) & 1;
    if (!ops_[op].definite || in) continue;
    if (stuck == ops_.size() || ops_[op].call < ops_[stuck].call) stuck = op;
  }
  CHARYBDIS_ASSERT(stuck < ops_.size());  // some definite operation was left out
  return stuck;
}

bool Search::Backtrack(size_t& entry) {
  if (stack_.empty()) return false;
  const Frame frame = stack_.back();
  stack_.pop_back();
  const size_t op = entries_[frame.entry].op;
  Flip(op);
  hash_ ^= zobrist_[op];
  done_ -= ops_[op].definite;
  state_ = frame.state;
  Unlift(frame.entry);
  entry = entries_[frame.entry].next;
  return true;
}

std::optional<bool> Search::Run() {
  linearized_.assign((ops_.size() + 63) / 64, 0);
  zobrist_.resize(ops_.size());
  Random random(0x6c696e656172ULL);
  for (uint64_t& word : zobrist_) word = random.Next();
  size_t entry = head_;
  while (done_ < definite_) {
    CHARYBDIS_ASSERT(entry != kNone);
    if (entries_[entry].is_call) {
      if (TryLinearize(entry)) {
        if (seen_.size() > max_states_) return std::nullopt;
        entry = head_;
      } else {
        entry = entries_[entry].next;
      }
      continue;
    }
    // A return reached before its operation was linearized: backtrack.
    if (!Backtrack(entry)) return false;
  }
  return true;
}

}  // namespace

std::optional<bool> SearchLinearization(const std::vector<TimedOp>& ops, SearchModel& model,
                                        uint64_t max_states, size_t* stuck) {
  Search search(ops, model, max_states);
  const std::optional<bool> verdict = search.Run();
  if (verdict == false && stuck != nullptr) *stuck = search.Stuck();
  return verdict;
}

}  // namespace charybdis::sim
