#include "sim/permission_check.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "core/env/assert.h"

namespace charybdis::sim {
namespace {

// Whether `resource` is `needed` or one of its parents.
bool Covers(const std::string& resource, const std::string& needed) {
  return resource == needed || needed.rfind(resource + "/", 0) == 0;
}

bool Concerns(const PermissionChange& change, const GuardedStatement& statement) {
  return change.role == statement.role && change.permission == statement.needed.permission &&
         Covers(change.resource, statement.needed.resource);
}

// Whether the role may have held the permission at some moment of
// [from, to]: a grant not yet taken back by an acknowledged revoke at
// `from`, or a grant (or a change of unknown fate) begun by `to`.
bool PossiblyHeld(const std::vector<PermissionChange>& changes, const GuardedStatement& statement, Nanos from,
                  Nanos to) {
  // Per covering resource, its state at `from` from its changes in order.
  std::map<std::string, bool> held_at_from;
  for (const PermissionChange& change : changes) {
    if (!Concerns(change, statement)) continue;
    if (change.invoked > to) continue;
    const bool may_be_grant = change.grant || !change.ok;
    if (change.completed >= from && may_be_grant) return true;  // in flight, or begun, within the window
    if (change.completed < from) held_at_from[change.resource] = change.ok ? change.grant : true;
  }
  for (const auto& [resource, held] : held_at_from) {
    if (held) return true;
  }
  return false;
}

// Whether the role held the permission throughout [from, to]: some
// covering resource's grant acknowledged before `from`, and no change of
// it begun before `to` that may have revoked it.
bool SurelyHeld(const std::vector<PermissionChange>& changes, const GuardedStatement& statement, Nanos from, Nanos to) {
  std::map<std::string, bool> held;
  for (const PermissionChange& change : changes) {
    if (!Concerns(change, statement) || change.invoked > to) continue;
    const bool may_be_revoke = !change.grant || !change.ok;
    if (change.completed < from && change.ok) {
      held[change.resource] = change.grant;
    } else if (may_be_revoke) {
      held[change.resource] = false;
    }
  }
  for (const auto& [resource, surely] : held) {
    if (surely) return true;
  }
  return false;
}

}  // namespace

CheckResult CheckPermissionHistory(const std::vector<PermissionChange>& changes,
                                   const std::vector<GuardedStatement>& statements, Nanos validity) {
  const std::string name = "permissions";
  size_t ran = 0, refused = 0;
  for (const GuardedStatement& statement : statements) {
    CHARYBDIS_ASSERT(statement.invoked <= statement.completed);
    const Nanos from = statement.invoked - validity;
    const std::string what = absl::StrCat(statement.role, "'s statement needing ", auth::PermissionName(statement.needed.permission),
                                          " on ", statement.needed.resource, " invoked at ", statement.invoked / kMillisecond,
                                          " ms, completed at ", statement.completed / kMillisecond, " ms");
    if (statement.outcome == GuardedStatement::Outcome::kRan) {
      ran++;
      if (!PossiblyHeld(changes, statement, from, statement.completed)) {
        return {name, false, absl::StrCat(what, " ran, but its role held no such permission then")};
      }
    } else if (statement.outcome == GuardedStatement::Outcome::kRefused) {
      refused++;
      if (SurelyHeld(changes, statement, from, statement.completed)) {
        return {name, false, absl::StrCat(what, " was refused, though its role held the permission throughout")};
      }
    }
  }
  if (ran == 0 || refused == 0) {
    return NothingToCheck(name, absl::StrCat(ran, " statements ran and ", refused, " were refused: both are needed"));
  }
  return {name, true, absl::StrCat(ran, " statements ran and ", refused, " were refused, each as its role's permissions allowed")};
}

}  // namespace charybdis::sim
