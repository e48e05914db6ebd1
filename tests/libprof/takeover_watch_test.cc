#include "libprof/takeover_watch.h"

#include <gtest/gtest.h>

namespace libprof {
namespace {

// Proves the steady state costs nothing: while buffers keep coming, launches are never counted.
TEST(TakeoverWatchTest, BuffersFlowingMeansNoCounting) {
  TakeoverWatch watch;
  for (uint64_t tick = 1; tick <= 10; ++tick) {
    auto v = watch.Tick(/*buffers=*/tick, /*launches=*/0, /*capturing=*/true);
    EXPECT_FALSE(v.count_launches) << tick;
    EXPECT_FALSE(v.taken_over);
  }
}

// Proves the path to a report: a silent tick switches counting on, then three ticks with
// launches and no buffer report the takeover once, with the launches counted since the silence.
TEST(TakeoverWatchTest, LaunchesWithoutBuffersAreATakeover) {
  TakeoverWatch watch;
  EXPECT_FALSE(watch.Tick(5, 0, true).count_launches);  // buffers came
  EXPECT_TRUE(watch.Tick(5, 0, true).count_launches);   // none came: start counting
  EXPECT_FALSE(watch.Tick(5, 100, true).taken_over);    // silent tick 1
  EXPECT_FALSE(watch.Tick(5, 250, true).taken_over);    // 2
  auto v = watch.Tick(5, 300, true);                     // 3
  EXPECT_TRUE(v.taken_over);
  EXPECT_EQ(v.missed_launches, 300u);
  EXPECT_FALSE(v.count_launches);
  for (int i = 0; i < 5; ++i) {  // reported once; the watch is over
    auto after = watch.Tick(5, 400 + i, true);
    EXPECT_FALSE(after.taken_over);
    EXPECT_FALSE(after.count_launches);
  }
}

// Proves a quiet program (no launches) and a program whose buffers resume are not reported, and
// that counting stops as soon as a buffer arrives.
TEST(TakeoverWatchTest, QuietOrRecoveringProgramsAreNotReported) {
  TakeoverWatch watch;
  watch.Tick(0, 0, true);  // counting on
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(watch.Tick(0, 0, true).taken_over);  // quiet
  EXPECT_FALSE(watch.Tick(0, 10, true).taken_over);  // silent 1
  EXPECT_FALSE(watch.Tick(0, 20, true).taken_over);  // silent 2
  auto resumed = watch.Tick(1, 30, true);             // a buffer: all is well
  EXPECT_FALSE(resumed.taken_over);
  EXPECT_FALSE(resumed.count_launches);
  EXPECT_TRUE(watch.Tick(1, 30, true).count_launches);  // silence again: count again, from zero
  EXPECT_FALSE(watch.Tick(1, 40, true).taken_over);
  EXPECT_FALSE(watch.Tick(1, 50, true).taken_over);
  EXPECT_TRUE(watch.Tick(1, 60, true).taken_over);
}

// Proves nothing is expected while capture is closed (capture range, delay, duration): launches
// outside the range bring no buffer and must not look like a takeover.
TEST(TakeoverWatchTest, ClosedCaptureIsNotWatched) {
  TakeoverWatch watch;
  for (uint64_t i = 0; i < 10; ++i) {
    auto v = watch.Tick(0, i * 100, /*capturing=*/false);
    EXPECT_FALSE(v.count_launches);
    EXPECT_FALSE(v.taken_over);
  }
}

}  // namespace
}  // namespace libprof
