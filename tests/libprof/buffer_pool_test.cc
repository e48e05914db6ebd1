#include "libprof/buffer_pool.h"

#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

namespace libprof {
namespace {

// Proves buffers are aligned for CUPTI and handed out zeroed, also after reuse.
TEST(BufferPoolTest, BuffersAreAlignedAndZeroed) {
  BufferPool pool(10000, 1, 4);
  uint8_t* a = pool.Acquire();
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 8, 0u);
  EXPECT_GE(pool.buffer_bytes(), 10000u);
  std::memset(a, 0xAB, 100);
  pool.Release(a, 100);
  uint8_t* b = pool.Acquire();
  ASSERT_EQ(b, a);  // recycled
  for (size_t i = 0; i < pool.buffer_bytes(); ++i) ASSERT_EQ(b[i], 0) << i;
  pool.Release(b, 0);
}

// Proves the pool never exceeds its maximum, even under concurrent requests, and counts refusals.
TEST(BufferPoolTest, RefusesPastMaximum) {
  BufferPool pool(4096, 0, 3);
  std::vector<uint8_t*> got(8, nullptr);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) threads.emplace_back([&, i] { got[i] = pool.Acquire(); });
  for (auto& t : threads) t.join();
  int granted = 0;
  for (uint8_t* b : got) granted += b != nullptr;
  EXPECT_EQ(granted, 3);
  EXPECT_EQ(pool.allocated(), 3u);
  EXPECT_EQ(pool.refusals(), 5u);
  for (uint8_t* b : got) pool.Release(b, 0);
  uint8_t* again = pool.Acquire();  // released buffers are available again
  EXPECT_NE(again, nullptr);
  pool.Release(again, 0);
}

}  // namespace
}  // namespace libprof
