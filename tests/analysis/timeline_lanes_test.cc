// Proves that slices nesting properly share a lane and that a partly overlapping slice moves to
// the first lane where it nests.
#include "analysis/reports/timeline_lanes.h"

#include <gtest/gtest.h>

namespace libprof::analysis {
namespace {

TEST(LaneAssignerTest, NestedAndTouchingSlicesShareLaneZero) {
  LaneAssigner lanes;
  EXPECT_EQ(lanes.Place(0, 100), 0u);   // outer
  EXPECT_EQ(lanes.Place(0, 50), 0u);    // same start, shorter: nested
  EXPECT_EQ(lanes.Place(10, 20), 0u);   // nested deeper
  EXPECT_EQ(lanes.Place(50, 100), 0u);  // touches the end of [0, 50]; inside [0, 100]
  EXPECT_EQ(lanes.Place(100, 100), 0u);  // zero length at the outer end: after it
  EXPECT_EQ(lanes.Place(200, 300), 0u);
  EXPECT_EQ(lanes.lanes(), 1u);
}

TEST(LaneAssignerTest, PartialOverlapGoesToTheFirstLaneThatFits) {
  LaneAssigner lanes;
  EXPECT_EQ(lanes.Place(0, 100), 0u);
  EXPECT_EQ(lanes.Place(50, 150), 1u);  // crosses the end of [0, 100]
  EXPECT_EQ(lanes.Place(60, 70), 0u);   // nests in [0, 100] again
  EXPECT_EQ(lanes.Place(90, 160), 2u);  // crosses both open slices
  EXPECT_EQ(lanes.Place(120, 140), 0u);  // [0, 100] has ended: lane 0 is free again
  EXPECT_EQ(lanes.lanes(), 3u);
}

}  // namespace
}  // namespace libprof::analysis
