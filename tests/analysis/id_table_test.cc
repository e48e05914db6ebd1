// Proves the compact lookups behind TraceIndex and StreamModel: IdTable answers the same for dense
// ids (a table) and sparse ones (a hash map), and InlineIds behaves as a vector past one element.
#include "analysis/model/id_table.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/model/stream_deps.h"

namespace libprof::analysis::testing {
namespace {

TEST(IdTableTest, DenseAndSparseIdsGiveTheSameAnswers) {
  for (uint64_t step : {uint64_t{1}, uint64_t{1} << 40}) {  // a table, then a hash map
    const uint64_t lo = 500, hi = 500 + 99 * step;
    IdTable table;
    table.Reset(lo, hi, 100);
    for (uint64_t i = 0; i < 100; i += 2) table.Set(lo + i * step, static_cast<uint32_t>(i));
    for (uint64_t i = 0; i < 100; ++i) {
      EXPECT_EQ(table.Find(lo + i * step), i % 2 == 0 ? static_cast<int64_t>(i) : -1);
    }
    EXPECT_EQ(table.Find(0), -1);          // below the range
    EXPECT_EQ(table.Find(hi + step), -1);  // above it
    table.Set(lo, 7);                      // overwritten
    EXPECT_EQ(table.Find(lo), 7);
  }
  IdTable empty;
  empty.Reset(UINT64_MAX, 0, 0);  // nothing to store
  EXPECT_EQ(empty.Find(1), -1);
}

TEST(InlineIdsTest, GrowsPastOneElementLikeAVector) {
  InlineIds ids;
  EXPECT_TRUE(ids.empty());
  ids.push_back(9);
  EXPECT_EQ(ids.size(), 1u);
  EXPECT_EQ(ids.front(), 9u);
  ids.push_back(3);
  ids.push_back(5);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::vector<uint32_t>(ids.begin(), ids.end()), (std::vector<uint32_t>{3, 5, 9}));
  const InlineIds copy = ids;
  EXPECT_EQ(copy.size(), 3u);
  EXPECT_EQ(copy[2], 9u);
  InlineIds one;
  one.push_back(4);
  InlineIds moved = std::move(one);
  EXPECT_EQ(moved.front(), 4u);
  EXPECT_EQ(std::find(moved.begin(), moved.end(), 4u), moved.begin());
}

}  // namespace
}  // namespace libprof::analysis::testing
