// Proves interval unions count overlaps once (the basis of "GPU was busy" and of host time).
#include "analysis/model/intervals.h"

#include <gtest/gtest.h>

namespace libprof::analysis {
namespace {

TEST(IntervalsTest, UnionCountsOverlappingStreamsOnce) {
  // Two streams: [0,10) and [5,20) overlap; [30,40) apart; an empty one is ignored.
  EXPECT_EQ(UnionLength({{0, 10}, {5, 20}, {30, 40}, {50, 50}}), 30u);
  EXPECT_EQ(UnionLength({}), 0u);
  EXPECT_EQ(UnionLength({{5, 20}, {0, 10}}), 20u);  // any order
  // Nested intervals (a driver call inside a runtime call) add nothing.
  EXPECT_EQ(UnionLength({{0, 100}, {10, 20}, {30, 90}}), 100u);
}

TEST(IntervalsTest, MergeCoveredGapsIntersect) {
  const auto merged = MergeIntervals({{30, 40}, {0, 10}, {10, 15}, {12, 14}});
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0], (Interval{0, 15}));
  EXPECT_EQ(merged[1], (Interval{30, 40}));
  EXPECT_EQ(CoveredLength(merged, 5, 35), 15u);
  EXPECT_EQ(CoveredLength(merged, 15, 30), 0u);
  EXPECT_EQ(CoveredLength(merged, 50, 40), 0u);
  const auto gaps = Gaps(merged);
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0], (Interval{15, 30}));
  const auto both = Intersect(merged, {{10, 32}, {38, 100}});
  ASSERT_EQ(both.size(), 3u);
  EXPECT_EQ(both[0], (Interval{10, 15}));
  EXPECT_EQ(both[1], (Interval{30, 32}));
  EXPECT_EQ(both[2], (Interval{38, 40}));
  EXPECT_EQ(OverlapLength(0, 10, 5, 20), 5u);
  EXPECT_EQ(OverlapLength(0, 10, 10, 20), 0u);
}

}  // namespace
}  // namespace libprof::analysis
