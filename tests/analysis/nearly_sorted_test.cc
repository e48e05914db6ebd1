// Proves StableSortNearlySorted gives exactly std::stable_sort's order (equal keys in their
// original order) for lists nearly in order, in reverse, random, with many equal keys, and at
// the edges (empty, one element), so TraceIndex's orders do not depend on which path it takes.
#include "analysis/model/nearly_sorted.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace libprof::analysis::testing {
namespace {

using Item = std::pair<uint32_t, uint32_t>;  // (key, original position)

bool ByKey(const Item& a, const Item& b) { return a.first < b.first; }

std::vector<Item> Numbered(const std::vector<uint32_t>& keys) {
  std::vector<Item> items;
  for (uint32_t i = 0; i < keys.size(); ++i) items.push_back({keys[i], i});
  return items;
}

void ExpectStableSortOrder(const std::vector<uint32_t>& keys, const char* what) {
  std::vector<Item> expected = Numbered(keys);
  std::stable_sort(expected.begin(), expected.end(), ByKey);
  std::vector<Item> got = Numbered(keys);
  StableSortNearlySorted(got.begin(), got.end(), ByKey);
  EXPECT_EQ(got, expected) << what << ", " << keys.size() << " keys";
}

TEST(NearlySortedTest, GivesStableSortsOrder) {
  std::mt19937 random(15);
  ExpectStableSortOrder({}, "empty");
  ExpectStableSortOrder({4}, "one");
  for (uint32_t n : {2u, 17u, 1000u, 20000u}) {
    std::vector<uint32_t> keys(n);
    for (uint32_t i = 0; i < n; ++i) keys[i] = 10 * i;
    ExpectStableSortOrder(keys, "sorted");
    // Nearly sorted: neighbours swapped here and there, as nested calls arrive.
    for (uint32_t i = 0; i + 1 < n; i += 5) std::swap(keys[i], keys[i + 1]);
    ExpectStableSortOrder(keys, "neighbours swapped");
    // One element far out of place: the insertion moves it a long way.
    if (n > 2) keys[n - 1] = 0;
    ExpectStableSortOrder(keys, "one far out of place");
    std::reverse(keys.begin(), keys.end());
    ExpectStableSortOrder(keys, "reversed");  // past the move budget: std::stable_sort
    for (uint32_t& k : keys) k = random() % 1000;
    ExpectStableSortOrder(keys, "random");
    for (uint32_t& k : keys) k = random() % 3;
    ExpectStableSortOrder(keys, "three keys");
    for (uint32_t i = 0; i < n; ++i) keys[i] = i / 4 + (random() % 2);  // runs of equal keys
    ExpectStableSortOrder(keys, "equal keys nearly in order");
  }
}

}  // namespace
}  // namespace libprof::analysis::testing
