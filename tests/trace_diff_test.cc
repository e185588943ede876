#include "sim/trace_diff.h"

#include <gtest/gtest.h>

namespace charybdis::sim {
namespace {

TEST(TraceDiffTest, NamesTheFirstDifferingLine) {
  const std::string report = FirstDivergence("1 a\n2 b\n3 c\n", "1 a\n2 x\n3 c\n");
  EXPECT_NE(report.find("trace line 2"), std::string::npos) << report;
  EXPECT_NE(report.find("run 1: 2 b"), std::string::npos) << report;
  EXPECT_NE(report.find("run 2: 2 x"), std::string::npos) << report;
}

TEST(TraceDiffTest, OneTraceEndingEarlyIsADivergence) {
  const std::string report = FirstDivergence("1 a\n2 b\n", "1 a\n");
  EXPECT_NE(report.find("trace line 2"), std::string::npos) << report;
  EXPECT_NE(report.find("run 2: (end)"), std::string::npos) << report;
}

TEST(TraceDiffTest, EqualTracesAgree) {
  EXPECT_EQ(FirstDivergence("1 a\n", "1 a\n"), "the traces agree");
}

}  // namespace
}  // namespace charybdis::sim
