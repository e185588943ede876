#include "sim/linearizability.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"
#include "sim/linearization_search.h"

namespace charybdis::sim {

namespace {

// Values interned per key: 0 is absent.
constexpr uint32_t kAbsent = 0;

// A register: its state is the interned value it holds.
class RegisterModel final : public SearchModel {
 public:
  explicit RegisterModel(const std::vector<const RegisterOp*>& history) {
    std::map<std::string, uint32_t> interned;
    auto intern = [&](const std::optional<std::string>& value) -> uint32_t {
      if (!value) return kAbsent;
      return interned.emplace(*value, static_cast<uint32_t>(interned.size() + 1)).first->second;
    };
    for (const RegisterOp* op : history) {
      const bool definite = op->outcome == RegisterOp::Outcome::kOk;
      ops_.push_back(Op{op->kind, definite, intern(op->value), intern(op->expected), op->applied});
      timed_.push_back(TimedOp{op->call, definite ? op->ret : 0, definite});
    }
  }

  std::optional<uint32_t> Step(size_t index, uint32_t state) override {
    const Op& op = ops_[index];
    switch (op.kind) {
      case RegisterOp::Kind::kRead:
        return state == op.value ? std::optional<uint32_t>(state) : std::nullopt;
      case RegisterOp::Kind::kWrite:
        return op.value;
      case RegisterOp::Kind::kCas: {
        const bool matches = state == op.expected;
        if (!op.definite) return matches ? op.value : state;
        if (op.applied != matches) return std::nullopt;
        return matches ? op.value : state;
      }
    }
    CHARYBDIS_ASSERT(false);
    return std::nullopt;
  }

  const std::vector<TimedOp>& timed() const { return timed_; }

 private:
  struct Op {
    RegisterOp::Kind kind;
    bool definite;  // ok (must be linearized) rather than info
    uint32_t value;
    uint32_t expected;
    bool applied;
  };
  std::vector<Op> ops_;
  std::vector<TimedOp> timed_;
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
    RegisterModel model(history);
    result.keys++;
    result.operations += history.size();
    const std::optional<bool> verdict = SearchLinearization(model.timed(), model, max_states);
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
