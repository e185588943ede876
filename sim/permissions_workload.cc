#include "sim/permissions_workload.h"

#include "absl/strings/str_cat.h"
#include "core/cql/connection.h"
#include "core/env/assert.h"
#include "sim/cql_frames.h"

namespace charybdis::sim {
namespace {

constexpr char kAdminPassword[] = "admin password";
constexpr char kRolePassword[] = "role password";
constexpr char kTable[] = "perm.t";
constexpr int kLoginAttempts = 20;

std::string RoleName(size_t role) { return absl::StrCat("r", role); }

uint32_t OrDefault(uint32_t value, uint32_t fallback) { return value == 0 ? fallback : value; }

}  // namespace

struct PermissionsWorkload::Session {
  Session(Cluster& cluster, NodeId node, Probes* probes, cql::AuthService* auth)
      : address(cluster.AddClient(0)),
        backend(cluster, address, node, probes, 0, auth),
        connection(prepared, backend, cql::ShardInfo{}, absl::StrCat("client ", address), [this](std::string frame) {
          if (cql::ParseHeader(frame).stream != 1 || !waiting) return;  // events
          auto done = std::move(waiting);
          waiting = nullptr;
          done(frame);
        }) {}

  // One frame on stream 1; `done` gets the answer.
  void Send(cql::Opcode opcode, const std::string& body, std::function<void(const std::string&)> on_answer) {
    CHARYBDIS_ASSERT(!waiting);  // one request at a time
    waiting = std::move(on_answer);
    cql::FrameHeader header;
    header.stream = 1;
    header.opcode = static_cast<uint8_t>(opcode);
    connection.OnFrame(header, body);
  }
  void Query(const std::string& text, std::function<void(const std::string&)> on_answer) {
    Send(cql::Opcode::kQuery, QueryBody(text, CL_QUORUM), std::move(on_answer));
  }

  const NodeId address;
  SimCqlBackend backend;
  cql::PreparedStatements prepared;
  cql::Connection connection;
  std::function<void(const std::string&)> waiting;
};

PermissionsWorkload::PermissionsWorkload(Simulator& simulator, Cluster& cluster, std::string name,
                                         const scenario::PermissionsWorkload& spec, Random random, Probes* probes)
    : simulator_(simulator), cluster_(cluster), name_(std::move(name)), spec_(spec), random_(std::move(random)),
      probes_(probes) {
  for (NodeId node = 1; node <= cluster.size(); node++) {
    hashers_.push_back(std::make_unique<SimPasswordHasher>(simulator, SimNetwork::HostOf(node), random_.Fork(node)));
    auth_.push_back(std::make_unique<cql::AuthService>(cql::AuthConfig{true, "admin", kAdminPassword}, *hashers_.back()));
  }
  changes_left_ = OrDefault(spec.changes(), 30);
  statements_left_.assign(OrDefault(spec.roles(), 3), OrDefault(spec.operations_per_role(), 40));
}

PermissionsWorkload::~PermissionsWorkload() = default;

std::unique_ptr<PermissionsWorkload::Session> PermissionsWorkload::Connect(NodeId node) {
  return std::make_unique<Session>(cluster_, node, probes_, auth_.at(node - 1).get());
}

void PermissionsWorkload::LogIn(Session& session, const std::string& role, std::function<void()> then) {
  session.Send(cql::Opcode::kStartup, StartupBody(), [this, &session, role, then](const std::string&) {
    TryLogIn(session, role, std::move(then), kLoginAttempts);
  });
}

void PermissionsWorkload::TryLogIn(Session& session, const std::string& role, std::function<void()> then,
                                   int attempts) {
  const std::string password = role == "admin" ? kAdminPassword : kRolePassword;
  session.Send(cql::Opcode::kAuthResponse, AuthResponseBody(role, password), [this, &session, role, then, attempts](
                                                                      const std::string& frame) {
    if (cql::ParseHeader(frame).opcode == static_cast<uint8_t>(cql::Opcode::kAuthSuccess)) return then();
    // The first logins make system_auth through the schema log, which may
    // fail while the cluster settles: the next attempt tries again.
    if (attempts <= 1) {
      failure_ = absl::StrCat(role, " could not log in: ", DecodeAnswer(frame).error_message);
      return;
    }
    simulator_.Schedule(simulator_.now() + 500 * kMillisecond,
                        EventTag{EventKind::kClient, SimNetwork::HostOf(session.address), 0, 0}, true,
                        [this, &session, role, then, attempts] { TryLogIn(session, role, then, attempts - 1); });
  });
}

void PermissionsWorkload::Start() {
  admin_ = Connect(1);
  LogIn(*admin_, "admin", [this] { Setup(0); });
}

void PermissionsWorkload::Setup(size_t step) {
  std::vector<std::string> statements = {
      "CREATE KEYSPACE perm WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
      "CREATE TABLE perm.t (k text PRIMARY KEY, v int)"};
  for (size_t role = 0; role < statements_left_.size(); role++) {
    statements.push_back(absl::StrCat("CREATE ROLE ", RoleName(role), " WITH PASSWORD = '", kRolePassword,
                                      "' AND LOGIN = true"));
  }
  if (step == statements.size()) {
    setup_done_ = true;
    for (size_t role = 0; role < statements_left_.size(); role++) {
      roles_.push_back(Connect(static_cast<NodeId>(1 + role % cluster_.size())));
      LogIn(*roles_.back(), RoleName(role), [this, role] { NextStatement(role); });
    }
    return NextChange();
  }
  admin_->Query(statements[step], [this, step, statement = statements[step]](const std::string& frame) {
    const CqlAnswer answer = DecodeAnswer(frame);
    if (answer.kind == CqlAnswer::Kind::kError) {
      failure_ = absl::StrCat("'", statement, "' failed: ", answer.error_message);
      return;
    }
    Setup(step + 1);
  });
}

void PermissionsWorkload::NextChange() {
  if (changes_left_ == 0) return;
  changes_left_--;
  PermissionChange change;
  change.role = RoleName(random_.Below(statements_left_.size()));
  change.permission = random_.Chance(0.5) ? auth::Permission::kSelect : auth::Permission::kModify;
  const bool on_table = random_.Chance(0.5);
  change.resource = on_table ? auth::TableResource("perm", "t") : auth::KeyspaceResource("perm");
  change.grant = random_.Chance(0.6);
  const std::string text = absl::StrCat(change.grant ? "GRANT " : "REVOKE ", auth::PermissionName(change.permission),
                                        on_table ? " ON TABLE perm.t " : " ON KEYSPACE perm ",
                                        change.grant ? "TO " : "FROM ", change.role);
  const Nanos interval = static_cast<Nanos>(spec_.change_interval_ms() == 0 ? 300 : spec_.change_interval_ms()) *
                         kMillisecond;
  in_flight_++;
  simulator_.Schedule(simulator_.now() + interval, EventTag{EventKind::kClient, SimNetwork::HostOf(admin_->address), 0, 0},
                      true, [this, change, text]() mutable {
                        change.invoked = simulator_.now();
                        admin_->Query(text, [this, change](const std::string& frame) mutable {
                          change.completed = simulator_.now();
                          change.ok = DecodeAnswer(frame).kind == CqlAnswer::Kind::kVoid;
                          changes_.push_back(change);
                          in_flight_--;
                          NextChange();
                        });
                      });
}

void PermissionsWorkload::NextStatement(size_t role) {
  if (statements_left_[role] == 0) return;
  statements_left_[role]--;
  GuardedStatement statement;
  statement.role = RoleName(role);
  const bool read = random_.Chance(0.5);
  statement.needed = {read ? auth::Permission::kSelect : auth::Permission::kModify, auth::TableResource("perm", "t")};
  const std::string key = absl::StrCat("k", random_.Below(4));
  const std::string text = read ? absl::StrCat("SELECT v FROM ", kTable, " WHERE k = '", key, "'")
                                : absl::StrCat("INSERT INTO ", kTable, " (k, v) VALUES ('", key, "', ", role, ")");
  const Nanos think = static_cast<Nanos>(spec_.think_time_ms() == 0 ? 50 : spec_.think_time_ms()) * kMillisecond;
  Session& session = *roles_[role];
  in_flight_++;
  simulator_.Schedule(simulator_.now() + think, EventTag{EventKind::kClient, SimNetwork::HostOf(session.address), 0, 0},
                      true, [this, role, statement, text, &session]() mutable {
                        statement.invoked = simulator_.now();
                        session.Query(text, [this, role, statement](const std::string& frame) mutable {
                          statement.completed = simulator_.now();
                          const CqlAnswer answer = DecodeAnswer(frame);
                          statement.outcome = answer.kind != CqlAnswer::Kind::kError
                                                  ? GuardedStatement::Outcome::kRan
                                                  : answer.error_code == static_cast<int32_t>(cql::ErrorCode::kUnauthorized)
                                                        ? GuardedStatement::Outcome::kRefused
                                                        : GuardedStatement::Outcome::kFailed;
                          statements_.push_back(statement);
                          in_flight_--;
                          NextStatement(role);
                        });
                      });
}

bool PermissionsWorkload::done() const {
  if (!failure_.empty()) return true;
  if (!setup_done_ || changes_left_ > 0 || in_flight_ > 0) return false;
  for (uint32_t left : statements_left_) {
    if (left > 0) return false;
  }
  return true;
}

nlohmann::json PermissionsWorkload::Results() const {
  size_t ran = 0, refused = 0, failed = 0;
  for (const GuardedStatement& statement : statements_) {
    ran += statement.outcome == GuardedStatement::Outcome::kRan;
    refused += statement.outcome == GuardedStatement::Outcome::kRefused;
    failed += statement.outcome == GuardedStatement::Outcome::kFailed;
  }
  return {{"name", name_}, {"changes", changes_.size()}, {"ran", ran}, {"refused", refused}, {"failed", failed}};
}

std::vector<CheckResult> PermissionsWorkload::Checks() const {
  if (!failure_.empty()) return {{"permissions", false, failure_}};
  return {CheckPermissionHistory(changes_, statements_, cql::Connection::kPermissionsValidity)};
}

}  // namespace charybdis::sim
