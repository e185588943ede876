#include "core/cql/role_statements.h"

#include "absl/strings/str_cat.h"
#include "core/auth/sasl_plain.h"
#include "core/cql/plan_parts.h"
#include "core/env/assert.h"

namespace charybdis::cql {
namespace {

Error Unauthorized(std::string message) { return {ErrorCode::kUnauthorized, std::move(message), ""}; }
Error Invalid(std::string message) { return {ErrorCode::kInvalid, std::move(message), ""}; }

std::optional<Error> BadName(const std::string& name) {
  if (name.empty()) return Invalid("a role's name must not be empty");
  if (name.size() > auth::kMaxRoleNameBytes) {
    return Invalid(absl::StrCat("a role's name has at most ", auth::kMaxRoleNameBytes, " bytes"));
  }
  return std::nullopt;
}

std::optional<Error> BadOptions(const RoleOptions& options) {
  if (!options.password) return std::nullopt;
  if (options.password->empty()) return Invalid("a password must not be empty");
  if (options.password->size() > auth::kMaxPasswordBytes) {
    // bcrypt reads no more: a longer one would be cut without a word.
    return Invalid(absl::StrCat("a password has at most ", auth::kMaxPasswordBytes, " bytes"));
  }
  return std::nullopt;
}

std::optional<Error> Refusal(const RoleRecord& caller, const CreateRole& create) {
  if (!caller.is_superuser) return Unauthorized(absl::StrCat("only superusers create roles; ", caller.name, " is not one"));
  if (auto bad = BadName(create.name)) return bad;
  return BadOptions(create.options);
}

std::optional<Error> Refusal(const RoleRecord& caller, const AlterRole& alter) {
  if (alter.name == caller.name && alter.options.superuser) {
    return Unauthorized("You aren't allowed to alter your own superuser status");
  }
  const bool own_password = alter.name == caller.name && !alter.options.login && !alter.options.superuser;
  if (!caller.is_superuser && !own_password) {
    return Unauthorized(absl::StrCat("only superusers alter other roles, or LOGIN and SUPERUSER; ", caller.name,
                                     " may change its own password"));
  }
  if (auto bad = BadName(alter.name)) return bad;
  return BadOptions(alter.options);
}

std::optional<Error> Refusal(const RoleRecord& caller, const DropRole& drop) {
  if (!caller.is_superuser) return Unauthorized(absl::StrCat("only superusers drop roles; ", caller.name, " is not one"));
  if (drop.name == caller.name) return Invalid("Cannot DROP primary role for current login");
  return BadName(drop.name);
}

std::optional<Error> Refusal(const RoleRecord&, const ListRoles&) { return std::nullopt; }

template <typename Statement>
std::optional<Error> NotAStatement(const RoleRecord&, const Statement&) {
  CHARYBDIS_ASSERT(false);  // RunRoleStatement takes role statements only
  return std::nullopt;
}

Plan VoidPlan() { return {VoidResult(), {}, {}, {}}; }

// The write of a CREATE, ALTER or DROP ROLE, once the password (if any) is
// hashed.
void Write(Backend& backend, const Statement& statement, std::optional<std::string> hash,
           std::function<void(Plan)> run) {
  RoleStore store(backend);
  auto answer = [run](std::optional<Error> error, bool applied, std::optional<Error> when_not_applied) {
    if (error) return run(ErrorPlan(*error));
    if (!applied && when_not_applied) return run(ErrorPlan(*when_not_applied));
    run(VoidPlan());
  };
  if (const auto* create = std::get_if<CreateRole>(&statement)) {
    RoleRecord role{create->name, create->options.login.value_or(false), create->options.superuser.value_or(false),
                    hash.value_or("")};
    std::optional<Error> exists;
    if (!create->if_not_exists) exists = Invalid(absl::StrCat(create->name, " already exists"));
    return store.Create(role, [answer, exists](std::optional<Error> error, bool applied) { answer(error, applied, exists); });
  }
  if (const auto* alter = std::get_if<AlterRole>(&statement)) {
    const Error missing = Invalid(absl::StrCat(alter->name, " doesn't exist"));
    return store.Alter(alter->name, alter->options.login, alter->options.superuser, hash,
                       [answer, missing](std::optional<Error> error, bool applied) { answer(error, applied, missing); });
  }
  const auto& drop = std::get<DropRole>(statement);
  std::optional<Error> missing;
  if (!drop.if_exists) missing = Invalid(absl::StrCat(drop.name, " doesn't exist"));
  store.Drop(drop.name, [answer, missing](std::optional<Error> error, bool applied) { answer(error, applied, missing); });
}

}  // namespace

void RunRoleStatement(Backend& backend, AuthService& auth, const RoleRecord& caller, const Statement& statement,
                      std::function<void(Plan)> run) {
  CHARYBDIS_ASSERT(IsRoleStatement(statement));
  const std::optional<Error> refusal = std::visit(
      [&](const auto& s) {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, CreateRole> || std::is_same_v<S, AlterRole> || std::is_same_v<S, DropRole> ||
                      std::is_same_v<S, ListRoles>) {
          return Refusal(caller, s);
        } else {
          return NotAStatement(caller, s);
        }
      },
      statement);
  if (refusal) return run(ErrorPlan(*refusal));
  if (std::holds_alternative<ListRoles>(statement)) {
    // A superuser lists every role; any other role, itself.
    return run(RoleStore(backend).List(caller.is_superuser ? std::nullopt : std::optional<std::string>(caller.name)));
  }
  const RoleOptions* options = nullptr;
  if (const auto* create = std::get_if<CreateRole>(&statement)) options = &create->options;
  if (const auto* alter = std::get_if<AlterRole>(&statement)) options = &alter->options;
  if (options == nullptr || !options->password) return Write(backend, statement, std::nullopt, std::move(run));
  auth.hasher().Hash(*options->password, [&backend, statement, run](std::string hash) {
    if (hash.empty()) return run(ErrorPlan({ErrorCode::kServer, "the password could not be hashed", ""}));
    Write(backend, statement, std::move(hash), run);
  });
}

}  // namespace charybdis::cql
