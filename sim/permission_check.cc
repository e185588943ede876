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

// What is known of a grant on one resource at a moment.
enum class Held { kNo, kMaybe, kYes };

// The state of each covering resource once every change that completed
// before `at` took effect: an acknowledged change sets it; one of unknown
// fate either set it or left it as it was.
std::map<std::string, Held> StatesAt(const std::vector<PermissionChange>& changes, const GuardedStatement& statement,
                                     Nanos at) {
  std::map<std::string, Held> states;
  for (const PermissionChange& change : changes) {
    if (!Concerns(change, statement) || change.completed >= at) continue;
    Held& state = states.try_emplace(change.resource, Held::kNo).first->second;
    const Held set = change.grant ? Held::kYes : Held::kNo;
    state = change.ok ? set : state == set ? set : Held::kMaybe;
  }
  return states;
}

// Whether the role may have held the permission at some moment of
// [from, to]: a grant perhaps in force at `from`, or a grant (of known
// fate or not) under way or begun within the window.
bool PossiblyHeld(const std::vector<PermissionChange>& changes, const GuardedStatement& statement, Nanos from,
                  Nanos to) {
  for (const PermissionChange& change : changes) {
    if (Concerns(change, statement) && change.grant && change.invoked <= to && change.completed >= from) return true;
  }
  for (const auto& [resource, state] : StatesAt(changes, statement, from)) {
    if (state != Held::kNo) return true;
  }
  return false;
}

// Whether the role held the permission throughout [from, to]: some
// covering resource surely granted at `from`, and no revoke of it (of
// known fate or not) begun by `to` and not completed before `from`.
bool SurelyHeld(const std::vector<PermissionChange>& changes, const GuardedStatement& statement, Nanos from, Nanos to) {
  for (const auto& [resource, state] : StatesAt(changes, statement, from)) {
    if (state != Held::kYes) continue;
    bool revoked = false;
    for (const PermissionChange& change : changes) {
      revoked = revoked || (Concerns(change, statement) && change.resource == resource && !change.grant &&
                            change.invoked <= to && change.completed >= from);
    }
    if (!revoked) return true;
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
