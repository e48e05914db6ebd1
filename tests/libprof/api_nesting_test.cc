#include "libprof/api_nesting.h"

#include <gtest/gtest.h>

namespace libprof {
namespace {

ApiCall Call(ApiDomain domain, uint64_t start, uint64_t end, uint32_t thread, uint64_t corr) {
  ApiCall c;
  c.domain = domain;
  c.start_ns = start;
  c.end_ns = end;
  c.thread_id = thread;
  c.correlation_id = corr;
  return c;
}

const ApiCall* Find(const std::vector<ApiCall>& calls, uint64_t corr) {
  for (const ApiCall& c : calls) {
    if (c.correlation_id == corr) return &c;
  }
  return nullptr;
}

// Proves a driver call inside a runtime call of the same thread is nested, in delivery order
// (the driver record arrives first, as CUPTI writes records when calls return).
TEST(ApiNestingTest, DriverInsideRuntimeIsNested) {
  ApiNestingTracker tracker;
  std::vector<ApiCall> ready;
  tracker.Add(Call(ApiDomain::kDriver, 110, 150, 1, 2), &ready);
  EXPECT_TRUE(ready.empty());  // undecided until the runtime call arrives
  tracker.Add(Call(ApiDomain::kRuntime, 100, 200, 1, 1), &ready);
  ASSERT_EQ(ready.size(), 2u);
  EXPECT_TRUE(Find(ready, 2)->nested);
  EXPECT_FALSE(Find(ready, 1)->nested);
  EXPECT_EQ(tracker.pending(), 0u);
}

// Proves a driver call the application made directly (before a runtime call) is not nested.
TEST(ApiNestingTest, DirectDriverCallIsNotNested) {
  ApiNestingTracker tracker;
  std::vector<ApiCall> ready;
  tracker.Add(Call(ApiDomain::kDriver, 10, 50, 1, 1), &ready);
  tracker.Add(Call(ApiDomain::kRuntime, 100, 200, 1, 2), &ready);
  ASSERT_EQ(ready.size(), 2u);
  EXPECT_FALSE(Find(ready, 1)->nested);
}

// Proves a runtime call on another thread never makes a driver call nested.
TEST(ApiNestingTest, OtherThreadDoesNotNest) {
  ApiNestingTracker tracker;
  std::vector<ApiCall> ready;
  tracker.Add(Call(ApiDomain::kDriver, 110, 150, 2, 1), &ready);
  tracker.Add(Call(ApiDomain::kRuntime, 100, 200, 1, 2), &ready);
  ASSERT_EQ(ready.size(), 1u);  // thread 2's call still waits for a runtime call of thread 2
  tracker.ReleaseAll(&ready);
  ASSERT_EQ(ready.size(), 2u);
  EXPECT_FALSE(Find(ready, 1)->nested);
}

// Proves driver-only threads are released by age, unnested, and that the release is by end time.
TEST(ApiNestingTest, ReleaseByAge) {
  ApiNestingTracker tracker;
  std::vector<ApiCall> ready;
  tracker.Add(Call(ApiDomain::kDriver, 10, 20, 3, 1), &ready);
  tracker.Add(Call(ApiDomain::kDriver, 30, 40, 3, 2), &ready);
  tracker.ReleaseOlderThan(35, &ready);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].correlation_id, 1u);
  EXPECT_EQ(tracker.pending(), 1u);
}

// Proves the per-thread bound: a thread that never calls the runtime cannot grow memory forever.
TEST(ApiNestingTest, PendingIsBounded) {
  ApiNestingTracker tracker;
  std::vector<ApiCall> ready;
  for (uint64_t i = 0; i < ApiNestingTracker::kMaxPendingPerThread + 10; ++i) {
    tracker.Add(Call(ApiDomain::kDriver, i * 10, i * 10 + 5, 1, i), &ready);
  }
  EXPECT_EQ(ready.size(), 10u);
  EXPECT_EQ(ready.front().correlation_id, 0u);  // oldest first
  EXPECT_EQ(tracker.pending(), ApiNestingTracker::kMaxPendingPerThread);
}

}  // namespace
}  // namespace libprof

namespace libprof {
namespace {

// Proves internal launches (made outside any API function) pass straight through, unnested.
TEST(ApiNestingTest, InternalLaunchPassesThrough) {
  ApiNestingTracker tracker;
  std::vector<ApiCall> ready;
  tracker.Add(Call(ApiDomain::kInternalLaunch, 110, 150, 1, 7), &ready);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_FALSE(ready[0].nested);
  EXPECT_EQ(tracker.pending(), 0u);
}

}  // namespace
}  // namespace libprof
