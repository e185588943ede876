#pragma once

// Roles read and write one table while an administrator grants and
// revokes their permissions (proto/scenario.proto, PermissionsWorkload;
// docs/security.md). Every node's CQL port asks for a password: the
// workload holds each node's authentication (core/cql/auth_service.h),
// as a real node's CQL server does, with the simulator's stand-in hash.
// Checked by sim/permission_check.h.

#include <memory>
#include <string>
#include <vector>

#include "core/cql/auth_service.h"
#include "core/env/random.h"
#include "proto/scenario.pb.h"
#include "sim/cluster.h"
#include "sim/cql_backend.h"
#include "sim/permission_check.h"
#include "sim/sim_password_hasher.h"
#include "sim/workload.h"

namespace charybdis::sim {

class PermissionsWorkload final : public Workload {
 public:
  PermissionsWorkload(Simulator& simulator, Cluster& cluster, std::string name,
                      const scenario::PermissionsWorkload& spec, Random random, Probes* probes);
  ~PermissionsWorkload() override;

  void Start() override;
  bool done() const override;
  nlohmann::json Results() const override;
  std::vector<CheckResult> Checks() const override;

 private:
  // One CQL connection, one request at a time.
  struct Session;

  std::unique_ptr<Session> Connect(NodeId node);
  // STARTUP, then the login; `then` once logged in.
  void LogIn(Session& session, const std::string& role, std::function<void()> then);
  void TryLogIn(Session& session, const std::string& role, std::function<void()> then, int attempts);
  // The keyspace, the table and the roles, one statement after another.
  void Setup(size_t step);
  void NextChange();
  void NextStatement(size_t role);

  Simulator& simulator_;
  Cluster& cluster_;
  const std::string name_;
  const scenario::PermissionsWorkload spec_;
  Random random_;
  Probes* const probes_;
  std::vector<std::unique_ptr<SimPasswordHasher>> hashers_;  // by node
  std::vector<std::unique_ptr<cql::AuthService>> auth_;      // by node
  std::unique_ptr<Session> admin_;
  std::vector<std::unique_ptr<Session>> roles_;
  std::vector<uint32_t> statements_left_;
  uint32_t changes_left_ = 0;
  uint32_t in_flight_ = 0;  // changes and statements scheduled or sent, not answered
  bool setup_done_ = false;
  std::string failure_;  // the setup's, if it failed
  std::vector<PermissionChange> changes_;
  std::vector<GuardedStatement> statements_;
};

}  // namespace charybdis::sim
