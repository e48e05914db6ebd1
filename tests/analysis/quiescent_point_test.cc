// Proves LatestQuiescentPoint (buckets, one sorted) gives the answer of sorting every span and
// scanning them, on random span sets that are sparse, dense, nested, with equal starts, with
// spans before `after`, with and without a quiescent limit; and checks small cases by hand.
#include "analysis/model/quiescent_point.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace libprof::analysis::testing {
namespace {

// The plain definition: sort all spans, keep the last start (after `after`) that every earlier
// span has ended by; the limit itself when every span ends by it.
std::optional<uint64_t> Reference(std::vector<Span> spans, uint64_t after, uint64_t limit) {
  std::sort(spans.begin(), spans.end());
  std::optional<uint64_t> best;
  uint64_t max_end = 0;
  for (const auto& [start, end] : spans) {
    if (max_end <= start && start > after) best = start;
    max_end = std::max(max_end, end);
  }
  if (max_end <= limit) best = limit;
  return best;
}

TEST(QuiescentPointTest, SmallCases) {
  std::vector<Span> none;
  EXPECT_EQ(LatestQuiescentPoint(none, 0, 100), 100u);
  std::vector<Span> ended = {{10, 20}, {30, 90}};
  EXPECT_EQ(LatestQuiescentPoint(ended, 0, 100), 100u);
  std::vector<Span> crossing = {{10, 20}, {30, 150}, {40, 50}};
  EXPECT_EQ(LatestQuiescentPoint(crossing, 0, 100), 30u);  // before the span over the limit
  std::vector<Span> crossing_after = {{10, 20}, {30, 150}, {40, 50}};
  EXPECT_EQ(LatestQuiescentPoint(crossing_after, 30, 100), std::nullopt);  // 30 is no candidate
  std::vector<Span> all_covered = {{0, 200}, {10, 20}, {30, 40}};
  EXPECT_EQ(LatestQuiescentPoint(all_covered, 0, 100), std::nullopt);
}

TEST(QuiescentPointTest, EqualsSortingEverySpan) {
  std::mt19937_64 rng(7);
  int with_answer = 0, below_limit = 0;
  for (int round = 0; round < 400; ++round) {
    const uint64_t after = rng() % 1000;
    const uint64_t limit = after + 1 + rng() % 100'000;
    const size_t n = rng() % 3 == 0 ? rng() % 40 : rng() % 20'000;
    const uint64_t typical = 1 + rng() % 200;  // dense (long spans) to sparse (short ones)
    std::vector<Span> spans;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t start = rng() % 8 == 0 ? rng() % (after + 1) : rng() % limit;
      const uint64_t length = rng() % 50 == 0 ? rng() % 20'000 : rng() % typical;
      spans.push_back({start, start + length});
      if (rng() % 10 == 0) spans.push_back({start, start + rng() % typical});  // equal starts
    }
    if (rng() % 2 == 0) {  // something runs over the limit: the cut, if any, lies before it
      const uint64_t start = after + 1 + rng() % (limit - after);
      spans.push_back({start, limit + 1 + rng() % 1000});
    }
    const auto expected = Reference(spans, after, limit);
    EXPECT_EQ(LatestQuiescentPoint(spans, after, limit), expected)
        << "round " << round << ", " << spans.size() << " spans";
    with_answer += expected.has_value();
    below_limit += expected.has_value() && *expected < limit;
  }
  // The cases cover each outcome often.
  EXPECT_GT(with_answer, 100) << below_limit;
  EXPECT_GT(below_limit, 50) << with_answer;
  EXPECT_GT(400 - with_answer, 20) << with_answer;
}

}  // namespace
}  // namespace libprof::analysis::testing
