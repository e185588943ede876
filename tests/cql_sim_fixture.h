#pragma once

// The fixture of the CQL tests that run statements end to end in the
// simulator: a simulated 3-node cluster (two shards per node) whose
// scenario declares a CQL schema, and a driver connection to node 1.

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/cql/types.h"
#include "core/cql/wire.h"
#include "sim/cluster.h"
#include "tests/scenario_text.h"
#include "tests/sim_cql_client.h"

namespace charybdis::sim {

class CqlSimFixture : public ::testing::Test {
 protected:
  using RowsOf = std::vector<std::vector<std::string>>;

  // `schema`: the scenario's schema block (tests/scenario_text.h).
  explicit CqlSimFixture(const std::string& schema)
      : scenario_(testing::MustParse(testing::BaseScenario(schema))),
        buggify_(false, Random(1)),
        cluster_(simulator_, scenario_, Random(5), buggify_),
        client_(simulator_, cluster_, 1) {
    cluster_.StartAll();
    simulator_.RunUntil(500 * kMillisecond);
    client_.Startup();
  }

  std::string Query(const std::string& text, ConsistencyLevel level = CL_QUORUM) { return client_.Query(text, level); }
  void RunFor(Nanos time) { simulator_.RunUntil(simulator_.now() + time); }

  // The rows of a Rows result (each value as bytes, empty for null), and
  // its paging state when more pages follow.
  static RowsOf Rows(const std::string& body, std::optional<std::string>* paging_state = nullptr) {
    cql::Reader in(body);
    EXPECT_EQ(in.Int(), 2) << "not a Rows result: " << ErrorOf(body);
    const int32_t flags = in.Int();
    const int32_t columns = in.Int();
    std::optional<std::string> state;
    if (flags & 0x0002) state = in.Bytes().bytes;
    if (paging_state != nullptr) *paging_state = state;
    EXPECT_EQ(flags & 0x0001, 0x0001);  // one table
    in.String();
    in.String();
    for (int32_t i = 0; i < columns; i++) {
      in.String();
      SkipType(in);
    }
    RowsOf rows(in.Int());
    for (auto& row : rows) {
      for (int32_t i = 0; i < columns; i++) row.push_back(in.Bytes().bytes.value_or(""));
    }
    EXPECT_TRUE(in.ok() && in.AtEnd());
    return rows;
  }

  // An ERROR's code, or 0 for another answer.
  static int32_t ErrorCodeOf(const std::string& body) {
    cql::Reader in(body);
    const int32_t code = in.Int();
    return code > 0x10 ? code : 0;
  }
  // An ERROR's code and message, or the result's kind.
  static std::string ErrorOf(const std::string& body) {
    cql::Reader in(body);
    const int32_t code = in.Int();
    return code > 0x10 ? absl::StrCat(code, ": ", in.String()) : absl::StrCat("result kind ", code);
  }

  Simulator simulator_;
  LoadedScenario scenario_;
  SimBuggify buggify_;
  Cluster cluster_;
  SimCqlClient client_;

 private:
  // Skips one [option] of a result's metadata, collections included.
  static void SkipType(cql::Reader& in) {
    const uint16_t kind = in.UnsignedShort();
    if (kind == static_cast<uint16_t>(cql::Kind::kList) || kind == static_cast<uint16_t>(cql::Kind::kSet)) SkipType(in);
    if (kind == static_cast<uint16_t>(cql::Kind::kMap)) {
      SkipType(in);
      SkipType(in);
    }
  }
};

}  // namespace charybdis::sim
