// Proves StableSortNearlySorted gives exactly std::stable_sort's order (equal keys in their
// original order) for lists nearly in order, in reverse, random, with many equal keys, and at
// the edges (empty, one element), so TraceIndex's orders do not depend on which path it takes;
// and that TraceIndex's device ops are those of a stable sort by start of the kinds' lists in
// record-kind order (kernels before copies before memsets at equal starts).
#include "analysis/model/nearly_sorted.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "analysis/model/trace_index.h"
#include "tests/analysis/trace_builder.h"

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

TEST(NearlySortedTest, DeviceOpsAreAStableSortByStartOfTheKindsInOrder) {
  TraceBuilder b;
  std::mt19937 random(16);
  uint64_t corr = 1;
  // Starts on a coarse grid so that kinds often tie; lists not quite in order.
  auto start = [&] { return static_cast<double>(random() % 40); };
  for (int i = 0; i < 60; ++i) {
    const double s = start();
    b.AddKernel("_Z1kv", s, s + 1, corr++, 7);
  }
  for (int i = 0; i < 25; ++i) {
    const double s = start();
    b.AddMemcpy(CopyKind::kHtoD, MemoryKind::kPinned, MemoryKind::kDevice, 8, s, s + 1, corr++, 7,
                true);
  }
  for (int i = 0; i < 10; ++i) {
    const double s = start();
    b.AddMemset(MemoryKind::kDevice, 8, s, s + 1, corr++, 7, true);
  }
  b.SetEnd(100);
  const ProcessTrace t = b.Build();
  std::vector<DeviceOp> expected;
  ForEachDeviceOp(t.records, [&](const DeviceOp& op, const auto&) { expected.push_back(op); });
  std::stable_sort(expected.begin(), expected.end(),
                   [](const DeviceOp& a, const DeviceOp& c) { return a.start_ns < c.start_ns; });
  const TraceIndex index(t);
  ASSERT_EQ(index.device_ops().size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(index.device_ops()[i].kind, expected[i].kind) << i;
    EXPECT_EQ(index.device_ops()[i].record, expected[i].record) << i;
    EXPECT_EQ(index.OpName(index.device_ops()[i]),
              index.OpName(expected[i]));  // names follow their op
    const auto ops = index.OpsOf(expected[i].correlation_id);
    ASSERT_EQ(ops.size(), 1u);
    EXPECT_EQ(index.device_ops()[ops[0]].correlation_id, expected[i].correlation_id);
  }
}

}  // namespace
}  // namespace libprof::analysis::testing
