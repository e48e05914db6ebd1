// Proves the one API-nesting implementation under both of its rules: capture's (libprof's
// recorder flags a driver call inside a runtime call, in CUPTI's delivery order, releasing by
// age and count) and the analysis's (any call inside the innermost open call, or flagged), and
// that the streaming decider gives the in-memory answer when calls arrive nearly in order and
// says so when they do not.
#include "proto/api_nesting.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <unordered_map>

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

// --- capture: ApiNestingTracker (kDriverInRuntime) ---------------------------------------------

// Proves a driver call inside a runtime call of the same thread is nested, in delivery order
// (the driver record arrives first, as CUPTI writes records when calls return).
TEST(ApiNestingTrackerTest, DriverInsideRuntimeIsNested) {
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
TEST(ApiNestingTrackerTest, DirectDriverCallIsNotNested) {
  ApiNestingTracker tracker;
  std::vector<ApiCall> ready;
  tracker.Add(Call(ApiDomain::kDriver, 10, 50, 1, 1), &ready);
  tracker.Add(Call(ApiDomain::kRuntime, 100, 200, 1, 2), &ready);
  ASSERT_EQ(ready.size(), 2u);
  EXPECT_FALSE(Find(ready, 1)->nested);
}

// Proves a runtime call on another thread never makes a driver call nested.
TEST(ApiNestingTrackerTest, OtherThreadDoesNotNest) {
  ApiNestingTracker tracker;
  std::vector<ApiCall> ready;
  tracker.Add(Call(ApiDomain::kDriver, 110, 150, 2, 1), &ready);
  tracker.Add(Call(ApiDomain::kRuntime, 100, 200, 1, 2), &ready);
  ASSERT_EQ(ready.size(), 1u);  // thread 2's call still waits for a runtime call of thread 2
  tracker.ReleaseAll(&ready);
  ASSERT_EQ(ready.size(), 2u);
  EXPECT_FALSE(Find(ready, 1)->nested);
}

// Proves the flag keeps its wire meaning: a driver call inside a driver call, or a runtime call
// inside a runtime call, is not flagged at capture.
TEST(ApiNestingTrackerTest, OnlyDriverInsideRuntimeIsFlagged) {
  ApiNestingTracker tracker;
  std::vector<ApiCall> ready;
  tracker.Add(Call(ApiDomain::kDriver, 20, 30, 1, 1), &ready);
  tracker.Add(Call(ApiDomain::kDriver, 10, 40, 1, 2), &ready);
  tracker.Add(Call(ApiDomain::kRuntime, 110, 120, 1, 3), &ready);
  tracker.Add(Call(ApiDomain::kRuntime, 100, 200, 1, 4), &ready);
  tracker.ReleaseAll(&ready);
  ASSERT_EQ(ready.size(), 4u);
  for (const ApiCall& c : ready) EXPECT_FALSE(c.nested) << c.correlation_id;
}

// Proves driver-only threads are released by age, unnested, and that the release is by end time.
TEST(ApiNestingTrackerTest, ReleaseByAge) {
  ApiNestingTracker tracker;
  std::vector<ApiCall> ready;
  tracker.Add(Call(ApiDomain::kDriver, 10, 20, 3, 1), &ready);
  tracker.Add(Call(ApiDomain::kDriver, 30, 40, 3, 2), &ready);
  tracker.ReleaseOlderThan(35, &ready);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].correlation_id, 1u);
  EXPECT_FALSE(ready[0].nested);
  EXPECT_EQ(tracker.pending(), 1u);
}

// Proves the per-thread bound: a thread that never calls the runtime cannot grow memory forever.
TEST(ApiNestingTrackerTest, PendingIsBounded) {
  ApiNestingTracker tracker;
  std::vector<ApiCall> ready;
  for (uint64_t i = 0; i < ApiNestingTracker::kMaxPendingPerThread + 10; ++i) {
    tracker.Add(Call(ApiDomain::kDriver, i * 10, i * 10 + 5, 1, i), &ready);
  }
  EXPECT_EQ(ready.size(), 10u);
  EXPECT_EQ(ready.front().correlation_id, 0u);  // oldest first
  EXPECT_EQ(tracker.pending(), ApiNestingTracker::kMaxPendingPerThread);
}

// Proves internal launches (made outside any API function) pass straight through, unnested.
TEST(ApiNestingTrackerTest, InternalLaunchPassesThrough) {
  ApiNestingTracker tracker;
  std::vector<ApiCall> ready;
  tracker.Add(Call(ApiDomain::kInternalLaunch, 110, 150, 1, 7), &ready);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_FALSE(ready[0].nested);
  EXPECT_EQ(tracker.pending(), 0u);
}

// --- analysis: kAnyCall ------------------------------------------------------------------------

// Proves the analysis rule: any call inside the innermost open call is nested (whatever its
// domain), the outermost call is reported, a flagged call stays nested, and of two calls with
// one interval the first in file order encloses the other.
TEST(ThreadNestingTest, AnyCallInsideTheInnermostOpenCallIsNested) {
  std::vector<ApiCall> calls = {
      Call(ApiDomain::kRuntime, 100, 200, 1, 1),  // top-level
      Call(ApiDomain::kRuntime, 110, 150, 1, 2),  // inside 0
      Call(ApiDomain::kDriver, 120, 130, 1, 3),   // inside 1
      Call(ApiDomain::kDriver, 300, 310, 1, 4),   // top-level, flagged
      Call(ApiDomain::kDriver, 400, 410, 1, 5),   // same interval as the next one
      Call(ApiDomain::kDriver, 400, 410, 1, 6),
  };
  calls[3].nested = true;
  std::vector<uint32_t> order = {5, 2, 4, 0, 3, 1};
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return NestingBefore(calls[a], a, calls[b], b); });
  ThreadNesting nesting;
  std::vector<NestingDecision> got(calls.size());
  for (uint32_t i : order) got[i] = nesting.Next(calls[i], i);
  const std::vector<bool> nested = {false, true, true, true, false, true};
  const std::vector<uint64_t> outermost = {0, 0, 0, 3, 4, 4};
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(got[i].nested, nested[i]) << i;
    EXPECT_EQ(got[i].outermost, outermost[i]) << i;
  }
}

// Calls of three threads: top-level calls with driver calls inside (some flagged, some not),
// a few zero-length and equal-interval calls.
std::vector<ApiCall> RandomCalls(std::mt19937_64* rng) {
  std::vector<ApiCall> calls;
  for (uint32_t tid = 1; tid <= 3; ++tid) {
    uint64_t t = 1000;
    for (int i = 0; i < 400; ++i) {
      const uint64_t start = t, end = t + 10 + (*rng)() % 90;
      calls.push_back({.start_ns = start, .end_ns = end, .thread_id = tid});
      const int children = static_cast<int>((*rng)() % 3);
      uint64_t c = start;
      for (int k = 0; k < children && c + 4 < end; ++k) {
        const uint64_t c_end = std::min(end, c + 1 + (*rng)() % 10);
        calls.push_back({.domain = ApiDomain::kDriver,
                         .start_ns = c,
                         .end_ns = c_end,
                         .thread_id = tid,
                         .nested = (*rng)() % 2 == 0});
        c = c_end;
      }
      t = end + (*rng)() % 5;  // sometimes touching the next call
    }
  }
  return calls;
}

// The in-memory answer (as TraceIndex computes it): each thread sorted, then judged in order.
std::vector<int> NestedInMemory(const std::vector<ApiCall>& calls) {
  std::unordered_map<uint32_t, std::vector<uint32_t>> by_thread;
  for (uint32_t i = 0; i < calls.size(); ++i) by_thread[calls[i].thread_id].push_back(i);
  std::vector<int> nested(calls.size(), -1);
  for (auto& [tid, list] : by_thread) {
    std::sort(list.begin(), list.end(),
              [&](uint32_t a, uint32_t b) { return NestingBefore(calls[a], a, calls[b], b); });
    ThreadNesting nesting;
    for (uint32_t i : list) nested[i] = nesting.Next(calls[i], i).nested;
  }
  return nested;
}

TEST(ApiNestingTest, StreamAgreesWithInMemoryInEndOrderAndInAnyOrderUnbounded) {
  std::mt19937_64 rng(11);
  const std::vector<ApiCall> calls = RandomCalls(&rng);
  const std::vector<int> expected = NestedInMemory(calls);
  // As CUPTI delivers them: each thread's calls by end time (nested ones before their parent).
  std::vector<size_t> order(calls.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return calls[a].end_ns < calls[b].end_ns; });
  for (size_t max_pending : {size_t{8}, size_t{0}}) {
    std::vector<int> got(calls.size(), -1);
    ApiNesting stream({.max_pending = max_pending},
                      [&](const ApiCall&, uint64_t seq, bool nested) { got[seq] = nested; });
    for (size_t i : order) stream.Add(calls[i], i);
    stream.Finish();
    EXPECT_FALSE(stream.out_of_order());
    for (size_t i = 0; i < calls.size(); ++i) ASSERT_EQ(got[i], expected[i]) << "call " << i;
  }
  // Shuffled: the bounded stream notices; the unbounded one is still exact.
  std::shuffle(order.begin(), order.end(), rng);
  ApiNesting bounded({.max_pending = 8}, [](const ApiCall&, uint64_t, bool) {});
  for (size_t i : order) bounded.Add(calls[i], i);
  bounded.Finish();
  EXPECT_TRUE(bounded.out_of_order());
  std::vector<int> got(calls.size(), -1);
  ApiNesting unbounded({.max_pending = 0, .horizon_ns = 0},
                       [&](const ApiCall&, uint64_t seq, bool nested) { got[seq] = nested; });
  for (size_t i : order) unbounded.Add(calls[i], i);
  unbounded.Finish();
  for (size_t i = 0; i < calls.size(); ++i) ASSERT_EQ(got[i], expected[i]) << "call " << i;
}

TEST(ApiNestingTest, AQuietThreadsCallsAreDecidedOnceOldNotAtTheEnd) {
  // Thread 1 makes two calls at the start, thread 2 thousands after: with a horizon, thread 1's
  // calls are decided as time moves on, so they reach the consumers in time order.
  std::vector<uint64_t> order;
  ApiNesting stream({.max_pending = 8, .horizon_ns = 1000},
                    [&](const ApiCall& c, uint64_t, bool) { order.push_back(c.start_ns); });
  stream.Add({.start_ns = 10, .end_ns = 20, .thread_id = 1}, 0);
  stream.Add({.start_ns = 30, .end_ns = 40, .thread_id = 1}, 1);
  for (uint64_t i = 0; i < 100; ++i) {
    stream.Add({.start_ns = 100 + 50 * i, .end_ns = 120 + 50 * i, .thread_id = 2}, 2 + i);
    stream.ReleaseOld();
  }
  stream.Finish();
  EXPECT_FALSE(stream.out_of_order());
  ASSERT_EQ(order.size(), 102u);
  // Both of thread 1's calls come out long before the end (as soon as 1 µs has passed).
  const size_t second = std::find(order.begin(), order.end(), 30u) - order.begin();
  EXPECT_LT(second, 30u);
}

}  // namespace
}  // namespace libprof
