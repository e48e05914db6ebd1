// Proves QuiescentCuts' latest cut (buckets, one sorted) is the answer of sorting every span and
// scanning them, on random span sets that are sparse, dense, nested, with equal starts, with
// spans before `after`, with and without a quiescent limit; and checks small cases by hand.
// On the same sets with inner cuts, every cut is quiescent, increasing, after `after`, the last
// is that answer, and where quiescent points are many the cuts come about `every` spans apart.
#include "analysis/model/quiescent_point.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
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

// The latest quiescent point alone (QuiescentCuts without inner cuts), or none.
std::optional<uint64_t> LatestQuiescentPoint(const std::vector<Span>& spans, uint64_t after,
                                             uint64_t limit) {
  const std::vector<uint64_t> cuts = QuiescentCuts(spans, after, limit, 0);
  if (cuts.empty()) return std::nullopt;
  EXPECT_EQ(cuts.size(), 1u);
  return cuts.back();
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

// Whether no span crosses q: every span starting before q ends by q.
bool Quiescent(const std::vector<Span>& spans, uint64_t q) {
  return std::all_of(spans.begin(), spans.end(),
                     [&](const Span& s) { return s.first >= q || s.second <= q; });
}

TEST(QuiescentPointTest, CutsAreQuiescentAndEndAtTheLatest) {
  std::mt19937_64 rng(11);
  int several = 0;
  for (int round = 0; round < 300; ++round) {
    const uint64_t after = rng() % 1000;
    const uint64_t limit = after + 1 + rng() % 100'000;
    const size_t n = rng() % 3 == 0 ? rng() % 40 : rng() % 20'000;
    const uint64_t typical = 1 + rng() % 200;
    std::vector<Span> spans;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t start = rng() % 8 == 0 ? rng() % (after + 1) : rng() % limit;
      const uint64_t length = rng() % 2000 == 0 ? rng() % 20'000 : rng() % typical;
      spans.push_back({start, start + length});
    }
    if (rng() % 2 == 0) {
      const uint64_t start = after + 1 + rng() % (limit - after);
      spans.push_back({start, limit + 1 + rng() % 1000});
    }
    const size_t every = 1 + rng() % 3000;
    std::vector<Span> copy = spans;
    const std::vector<uint64_t> cuts = QuiescentCuts(copy, after, limit, every);
    const auto latest = Reference(spans, after, limit);
    ASSERT_EQ(cuts.empty(), !latest.has_value()) << "round " << round;
    if (cuts.empty()) continue;
    EXPECT_EQ(cuts.back(), *latest) << "round " << round;
    for (size_t i = 0; i < cuts.size(); ++i) {
      EXPECT_GT(cuts[i], i == 0 ? after : cuts[i - 1]) << "round " << round << " cut " << i;
      EXPECT_TRUE(Quiescent(spans, cuts[i])) << "round " << round << " cut " << i;
    }
    several += cuts.size() > 1;
  }
  EXPECT_GT(several, 50);
}

TEST(QuiescentPointTest, CutsComeAboutEveryNSpansWhereTheyCan) {
  // Short spans, one after the other with gaps: every start is quiescent.
  std::vector<Span> spans;
  for (uint64_t i = 0; i < 100'000; ++i) spans.push_back({10 * i + 1, 10 * i + 5});
  const std::vector<uint64_t> cuts = QuiescentCuts(spans, 0, 10 * 100'000 + 1, 10'000);
  // 9 inner cuts of about 10,000 spans each (bucket-grained), then the limit.
  ASSERT_GE(cuts.size(), 9u);
  ASSERT_LE(cuts.size(), 11u);
  for (size_t i = 1; i + 1 < cuts.size(); ++i) {
    const uint64_t spans_between = (cuts[i] - cuts[i - 1]) / 10;
    EXPECT_GE(spans_between, 9'000u) << i;
    EXPECT_LE(spans_between, 11'000u) << i;
  }
  // Nothing quiescent inside but the first span's start, which would cut off nothing: one cut,
  // the limit, past the one long span.
  std::vector<Span> covered = {{1, 5'000'000}};
  for (uint64_t i = 0; i < 1000; ++i) covered.push_back({10 * i + 2, 10 * i + 5});
  EXPECT_EQ(QuiescentCuts(covered, 0, 6'000'000, 100), std::vector<uint64_t>{6'000'000});
}

}  // namespace
}  // namespace libprof::analysis::testing
