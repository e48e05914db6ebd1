#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "proto/trace_writer.h"

namespace libprof {
namespace {

// Proves ids are dense from 1, id 0 is "", equal strings share an id, and CollectFrom returns
// the tail of the table in id order.
TEST(StringInternerTest, DenseIdsAndCollect) {
  StringInterner strings;
  EXPECT_EQ(strings.size(), 1u);
  EXPECT_EQ(strings.Intern(""), 0u);
  EXPECT_EQ(strings.Intern("a"), 1u);
  EXPECT_EQ(strings.Intern("b"), 2u);
  EXPECT_EQ(strings.Intern(std::string_view("abc", 1)), 1u);
  EXPECT_EQ(strings.size(), 3u);
  std::vector<std::pair<uint32_t, std::string>> tail;
  strings.CollectFrom(1, &tail);
  EXPECT_EQ(tail, (std::vector<std::pair<uint32_t, std::string>>{{1, "a"}, {2, "b"}}));
  tail.clear();
  strings.CollectFrom(3, &tail);
  EXPECT_TRUE(tail.empty());
}

// Proves concurrent interning from several threads (NVTX handlers) agrees on one id per string
// and never hands out an id twice.
TEST(StringInternerTest, ThreadSafe) {
  StringInterner strings;
  constexpr int kThreads = 4, kStrings = 2000;
  std::vector<std::vector<uint32_t>> ids(kThreads, std::vector<uint32_t>(kStrings));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kStrings; ++i) ids[t][i] = strings.Intern("s" + std::to_string(i));
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(ids[t], ids[0]);
  EXPECT_EQ(strings.size(), kStrings + 1u);
  std::vector<std::pair<uint32_t, std::string>> all;
  strings.CollectFrom(0, &all);
  for (int i = 0; i < kStrings; ++i) EXPECT_EQ(all[ids[0][i]].second, "s" + std::to_string(i));
}

}  // namespace
}  // namespace libprof
