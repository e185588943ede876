#pragma once

// What the simulated auth tests share (cql_auth_sim_test,
// client_api_auth_sim_test): a started 3-node cluster whose CQL port asks
// for a password, the superuser admin / s3cret, and the simulator's
// stand-in for bcrypt.

#include <string>

#include <gtest/gtest.h>

#include "core/cql/auth_service.h"
#include "sim/cluster.h"
#include "sim/sim_password_hasher.h"
#include "tests/scenario_text.h"

namespace charybdis::sim {

class AuthSimTestBase : public ::testing::Test {
 protected:
  // `scenario`: a scenario's text (testing::BaseScenario's and more).
  explicit AuthSimTestBase(const std::string& scenario)
      : scenario_(testing::MustParse(scenario)),
        buggify_(false, Random(1)),
        cluster_(simulator_, scenario_, Random(5), buggify_),
        hasher_(simulator_, SimNetwork::HostOf(1), Random(7)),
        auth_(cql::AuthConfig{true, "admin", "s3cret"}, hasher_) {}

  // Starts the nodes and lets them see one another.
  void Start() {
    cluster_.StartAll();
    RunFor(500 * kMillisecond);
  }
  void RunFor(Nanos time) { simulator_.RunUntil(simulator_.now() + time); }

  Simulator simulator_;
  LoadedScenario scenario_;
  SimBuggify buggify_;
  Cluster cluster_;
  SimPasswordHasher hasher_;
  cql::AuthService auth_;
};

}  // namespace charybdis::sim
