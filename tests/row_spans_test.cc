// The row spans a Paxos prepare names (core/paxos/row_spans.h): what a
// proposer sends is sorted and disjoint and names the same rows as the
// operations' spans, and an acceptor tells such spans from others.
#include "core/paxos/row_spans.h"

#include <set>
#include <string>

#include "core/env/random.h"
#include "gtest/gtest.h"

namespace charybdis {
namespace {

RowSpan Span(const std::string& first, const std::string& last) {
  RowSpan span;
  span.set_first(first);
  span.set_last(last);
  return span;
}

google::protobuf::RepeatedPtrField<RowSpan> Repeated(const std::vector<RowSpan>& spans) {
  google::protobuf::RepeatedPtrField<RowSpan> repeated;
  for (const RowSpan& span : spans) *repeated.Add() = span;
  return repeated;
}

bool Covers(const std::vector<RowSpan>& spans, const std::string& row) {
  for (const RowSpan& span : spans) {
    if (span.first() <= row && row <= span.last()) return true;
  }
  return false;
}

TEST(RowSpansTest, MergesOverlappingAndTouchingSpansAndKeepsApartOnesApart) {
  const std::vector<RowSpan> merged =
      SortedDisjoint({Span("m", "p"), Span("a", "c"), Span("b", "d"), Span("p", "q"), Span("x", "x"), Span("n", "o")});
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged[0].first(), "a");
  EXPECT_EQ(merged[0].last(), "d");
  EXPECT_EQ(merged[1].first(), "m");  // "p".."q" starts where "m".."p" ends
  EXPECT_EQ(merged[1].last(), "q");
  EXPECT_EQ(merged[2].first(), "x");
  EXPECT_EQ(merged[2].last(), "x");
  EXPECT_TRUE(IsSortedAndDisjoint(Repeated(merged)));
}

TEST(RowSpansTest, RandomSpansMergeIntoTheSameRowsSortedAndDisjoint) {
  Random random(7);
  for (int trial = 0; trial < 200; trial++) {
    std::vector<RowSpan> spans;
    const int count = 1 + static_cast<int>(random.Below(12));
    for (int i = 0; i < count; i++) {
      char a = static_cast<char>('a' + random.Below(26));
      char b = static_cast<char>('a' + random.Below(26));
      if (a > b) std::swap(a, b);
      spans.push_back(Span(std::string(1, a), std::string(1, b)));
    }
    const std::vector<RowSpan> merged = SortedDisjoint(spans);
    EXPECT_TRUE(IsSortedAndDisjoint(Repeated(merged)));
    for (char row = 'a'; row <= 'z'; row++) {
      EXPECT_EQ(Covers(merged, std::string(1, row)), Covers(spans, std::string(1, row))) << "row " << row;
    }
  }
}

TEST(RowSpansTest, BackwardsOutOfOrderAndOverlappingSpansAreNotSortedAndDisjoint) {
  EXPECT_TRUE(IsSortedAndDisjoint(Repeated({})));
  EXPECT_TRUE(IsSortedAndDisjoint(Repeated({Span("a", "b"), Span("c", "c")})));
  EXPECT_FALSE(IsSortedAndDisjoint(Repeated({Span("b", "a")})));
  EXPECT_FALSE(IsSortedAndDisjoint(Repeated({Span("c", "d"), Span("a", "b")})));
  EXPECT_FALSE(IsSortedAndDisjoint(Repeated({Span("a", "c"), Span("c", "d")})));
}

}  // namespace
}  // namespace charybdis
