#pragma once

#include <string>

#include "nlohmann/json.hpp"

namespace charybdis::sim {

struct CheckResult {
  std::string name;
  bool passed = false;
  std::string detail;
  // A failure means work did not finish (exit 3), not a wrong answer.
  bool liveness = false;
  // It failed because the history held nothing it could check.
  bool nothing_checked = false;
};

// A check that fails for want of anything to check: a green verdict over
// zero operations would hide an unchecked history.
inline CheckResult NothingToCheck(std::string name, const std::string& what) {
  CheckResult result{std::move(name), false, "nothing to check: " + what};
  result.nothing_checked = true;
  return result;
}

// A source of client operations in a simulation.
class Workload {
 public:
  virtual ~Workload() = default;
  virtual void Start() = 0;
  // Every client has finished its operations.
  virtual bool done() const = 0;
  // Per-workload results for the report.
  virtual nlohmann::json Results() const = 0;
  // The workload's own correctness checks, judged at the end of the run.
  virtual std::vector<CheckResult> Checks() const = 0;
};

}  // namespace charybdis::sim
