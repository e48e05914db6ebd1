#include "libprof/context_creating_calls.h"

#include <gtest/gtest.h>

#include <thread>

namespace libprof {
namespace {

constexpr uint32_t kStreamPriorityRange = 232;  // any runtime callback id
constexpr uint32_t kCtxGetCurrent = 7;          // any driver callback id

// Proves the PyTorch case: a context created inside a filtered runtime call that makes filtered
// driver calls of its own keeps the outermost call, from its entry to its exit, once.
TEST(ContextCreatingCallsTest, KeepsTheOutermostCallAContextWasCreatedIn) {
  ContextCreatingCalls calls;
  calls.Enter(ApiDomain::kRuntime, kStreamPriorityRange, 134, 536, 1000);
  calls.Enter(ApiDomain::kDriver, kCtxGetCurrent, 135, 536, 1100);
  EXPECT_FALSE(calls.Exit(1200, 0, true)) << "an inner call is not the one kept";
  EXPECT_TRUE(calls.ContextCreated());
  EXPECT_TRUE(calls.Take().empty()) << "nothing kept before the call returns";
  EXPECT_TRUE(calls.Exit(124000, 0, true));
  const std::vector<ApiCall> kept = calls.Take();
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].domain, ApiDomain::kRuntime);
  EXPECT_EQ(kept[0].callback_id, kStreamPriorityRange);
  EXPECT_EQ(kept[0].correlation_id, 134u);
  EXPECT_EQ(kept[0].thread_id, 536u);
  EXPECT_EQ(kept[0].start_ns, 1000u);
  EXPECT_EQ(kept[0].end_ns, 124000u);
  EXPECT_TRUE(calls.Take().empty()) << "taken once";
}

// Proves filtered calls around which no context was created are not kept, and that a context
// created outside any filtered call (inside a recorded cudaMalloc) is reported as such.
TEST(ContextCreatingCallsTest, KeepsNothingWhenNoContextWasCreatedInside) {
  ContextCreatingCalls calls;
  calls.Enter(ApiDomain::kRuntime, kStreamPriorityRange, 10, 1, 100);
  EXPECT_FALSE(calls.Exit(200, 0, true));
  EXPECT_FALSE(calls.ContextCreated()) << "no filtered call open";
  calls.Enter(ApiDomain::kRuntime, kStreamPriorityRange, 11, 1, 300);
  EXPECT_FALSE(calls.Exit(400, 0, true));
  EXPECT_TRUE(calls.Take().empty());
  EXPECT_FALSE(calls.Exit(500, 0, true)) << "an exit whose entry came before the watch";
}

// Proves a creating call is dropped but still ends the watch when it returned outside the
// recording (keep false), and that its return value is kept when it is recorded.
TEST(ContextCreatingCallsTest, ACallOutsideTheRecordingEndsTheWatchWithoutARecord) {
  ContextCreatingCalls calls;
  calls.Enter(ApiDomain::kDriver, kCtxGetCurrent, 20, 2, 100);
  EXPECT_TRUE(calls.ContextCreated());
  EXPECT_TRUE(calls.Exit(900, 0, false));
  EXPECT_TRUE(calls.Take().empty());
  calls.Enter(ApiDomain::kDriver, kCtxGetCurrent, 21, 2, 1000);
  EXPECT_TRUE(calls.ContextCreated());
  EXPECT_TRUE(calls.Exit(1900, 201, true));
  const std::vector<ApiCall> kept = calls.Take();
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].return_value, 201);
  EXPECT_EQ(kept[0].domain, ApiDomain::kDriver);
}

// Proves each thread has its own open call: a context created on one thread does not make
// another thread's filtered call the creating one.
TEST(ContextCreatingCallsTest, ThreadsAreApart) {
  ContextCreatingCalls calls;
  calls.Enter(ApiDomain::kRuntime, kStreamPriorityRange, 30, 3, 100);
  std::thread other([&] {
    calls.Enter(ApiDomain::kRuntime, kStreamPriorityRange, 31, 4, 150);
    EXPECT_TRUE(calls.ContextCreated());
    EXPECT_TRUE(calls.Exit(250, 0, true));
  });
  other.join();
  EXPECT_FALSE(calls.Exit(300, 0, true)) << "this thread created nothing";
  const std::vector<ApiCall> kept = calls.Take();
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].thread_id, 4u);
  EXPECT_EQ(kept[0].correlation_id, 31u);
}

}  // namespace
}  // namespace libprof
