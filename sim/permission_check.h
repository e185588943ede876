#pragma once

// The permission scenario's checker (docs/security.md): from the
// administrator's grants and revokes and the roles' statements, each with
// the times it was invoked and completed, it verifies that
// - no statement ran without the permission it needed at some moment a
//   connection could have read it: within [invoked - validity, completed]
//   (a connection trusts what it read for `validity`);
// - no statement was refused while its role held the permission for the
//   whole of that window (a grant acknowledged before it began, no
//   revoke begun before it ended).
// A change that failed may have taken effect or not, from its invocation on.

#include <string>
#include <vector>

#include "core/auth/permissions.h"
#include "core/env/time.h"
#include "sim/workload.h"

namespace charybdis::sim {

struct PermissionChange {
  Nanos invoked = 0;
  Nanos completed = 0;
  std::string role;
  std::string resource;  // as stored: "data/ks" or "data/ks/t"
  auth::Permission permission = auth::Permission::kSelect;
  bool grant = true;  // false: revoke
  bool ok = true;     // acknowledged; false: its fate is unknown
};

struct GuardedStatement {
  Nanos invoked = 0;
  Nanos completed = 0;
  std::string role;
  auth::Needed needed;
  enum class Outcome { kRan, kRefused, kFailed } outcome = Outcome::kRan;  // kFailed: neither is known
};

CheckResult CheckPermissionHistory(const std::vector<PermissionChange>& changes,
                                   const std::vector<GuardedStatement>& statements, Nanos validity);

}  // namespace charybdis::sim
