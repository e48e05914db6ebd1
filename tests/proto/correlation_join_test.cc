// Proves the correlation join: the launching call of an id is the first unnested call in file
// order, else the first call, whatever order the calls are offered in; and the streaming join
// settles ids once they are old, and reports records that arrive for an id already settled; a
// launching call that is certain (not nested, nothing undecided) is told at once.
#include "proto/correlation_join.h"

#include <gtest/gtest.h>

#include <map>

namespace libprof {
namespace {

TEST(LaunchesRatherTest, TheFirstUnnestedCallElseTheFirstCall) {
  EXPECT_TRUE(LaunchesRather(/*nested=*/false, 5, /*other_nested=*/true, 1));
  EXPECT_FALSE(LaunchesRather(true, 1, false, 5));
  EXPECT_TRUE(LaunchesRather(false, 1, false, 5));
  EXPECT_FALSE(LaunchesRather(false, 5, false, 1));
  EXPECT_TRUE(LaunchesRather(true, 1, true, 5));
}

TEST(CorrelationJoinTest, TheLaunchingCallIsTheFirstUnnestedOneAndLateRecordsAreReported) {
  struct Got {
    LaunchSite site;
    uint64_t device_ns;
    size_t held;
  };
  std::map<uint32_t, Got> got;  // by the thread of the site (one id per thread below)
  CorrelationJoin<int> join(
      /*bounded=*/true,
      [&](const LaunchSite& site, uint64_t ns, const std::vector<const int*>& held) {
        got[site.thread_id] = {site, ns, held.size()};
      },
      /*horizon_ns=*/300, /*op_lag=*/2, /*max_span=*/40);
  // Id 10: a nested driver call arrives (and is decided) before the runtime call around it.
  join.CallSeen(10, 500);
  join.CallDecided(10, 1, 500, /*seq=*/1, /*nested=*/true);
  join.AddDeviceTime(10, 30, 600);
  join.Hold(10, 42, 600);
  join.CallSeen(10, 400);
  join.CallDecided(10, 1, 400, /*seq=*/2, /*nested=*/false);
  // Id 11: only nested calls, the first in file order decided last.
  join.CallSeen(11, 700);
  join.CallDecided(11, 2, 700, 4, true);
  join.CallSeen(11, 650);
  join.CallDecided(11, 2, 650, 3, true);
  join.AddDeviceTime(11, 5, 720);
  join.AddDeviceTime(20, 1, 800);  // device records moved on, but not the horizon: nothing settles
  join.SettleOld();
  EXPECT_TRUE(got.empty());
  join.AddDeviceTime(21, 1, 1100);  // now 10 and 11 are old enough (20 and 21 are not)
  join.SettleOld();
  EXPECT_EQ(got.size(), 2u);
  ASSERT_EQ(got.count(1), 1u);
  EXPECT_EQ(got[1].site.start_ns, 400u);
  EXPECT_EQ(got[1].device_ns, 30u);
  EXPECT_EQ(got[1].held, 1u);
  EXPECT_EQ(got[2].site.start_ns, 650u);
  EXPECT_FALSE(join.out_of_order());
  join.AddDeviceTime(10, 7, 900);  // too late
  EXPECT_TRUE(join.out_of_order());
}

TEST(CorrelationJoinTest, ACertainLaunchingCallIsToldAtOnce) {
  std::vector<int> known, settled;  // records handed back, in order
  CorrelationJoin<int> join(
      /*bounded=*/true,
      [&](const LaunchSite&, uint64_t, const std::vector<const int*>& held) {
        for (const int* r : held) settled.push_back(*r);
      },
      /*horizon_ns=*/300, /*op_lag=*/2, /*max_span=*/40);
  join.OnKnown([&](const LaunchSite& site, const std::vector<const int*>& held) {
    EXPECT_EQ(site.thread_id, 1u);
    for (const int* r : held) known.push_back(*r);
  });
  // Id 10: records before any call are held; the nested driver call decides nothing (the
  // runtime call around it may still come), the runtime call does: both records come back.
  EXPECT_FALSE(join.KnownSite(10, 600));
  join.Hold(10, 1, 600);
  join.CallSeen(10, 500);
  join.CallDecided(10, 1, 500, /*seq=*/1, /*nested=*/true);
  EXPECT_FALSE(join.KnownSite(10, 600));
  join.Hold(10, 2, 610);
  join.CallSeen(10, 400);
  EXPECT_FALSE(join.KnownSite(10, 610));  // seen, not decided yet
  join.CallDecided(10, 1, 400, /*seq=*/2, /*nested=*/false);
  EXPECT_EQ(known, (std::vector<int>{1, 2}));
  // Now certain: a later record's call is known on arrival.
  const std::optional<LaunchSite> site = join.KnownSite(10, 620);
  ASSERT_TRUE(site);
  EXPECT_EQ(site->start_ns, 400u);
  // Id 11 has only a nested call: never certain, its record waits for settlement.
  join.CallSeen(11, 700);
  join.CallDecided(11, 2, 700, 3, true);
  join.Hold(11, 3, 720);
  EXPECT_FALSE(join.KnownSite(11, 720));
  join.Finish();
  EXPECT_EQ(known, (std::vector<int>{1, 2}));
  EXPECT_EQ(settled, (std::vector<int>{3}));
}

}  // namespace
}  // namespace libprof
