// Proves the memory-pool picture on MemoryPoolScenario (hand-computed in scenarios.cc): pooled
// against direct allocations, one row per (device, pool) with its allocations and frees, the
// release threshold (the last one, and that it changed), the pool's largest size and use, an
// imported pool without them; that a trace without pools shows no pool section; and that the
// fields survive the trace file (the scenario is read back from one).
#include "analysis/metrics/memory_pools.h"

#include <gtest/gtest.h>

#include "analysis/reports/memory_pools_report.h"
#include "analysis/reports/memory_report.h"
#include "tests/analysis/scenarios.h"

namespace libprof::analysis::testing {
namespace {

constexpr uint64_t kMiB = 1 << 20;

class MemoryPoolsTest : public ::testing::Test {
 protected:
  MemoryPoolsTest() : trace_(MemoryPoolScenario().RoundTrip(dir_.Path("pools.pb"))) {}
  TempDir dir_;
  ProcessTrace trace_;
};

TEST_F(MemoryPoolsTest, PooledAgainstDirect) {
  const MemoryPoolReport r = AnalyzeMemoryPools(trace_);
  EXPECT_EQ(r.direct_allocations, 1u);
  EXPECT_EQ(r.direct_bytes, 64 * kMiB);
  EXPECT_EQ(r.pooled_allocations, 4u + 2u + 1u);
  EXPECT_EQ(r.pooled_bytes, 4 * 8 * kMiB + 2 * 16 * kMiB + 4 * kMiB);
}

TEST_F(MemoryPoolsTest, OneRowPerPool) {
  const MemoryPoolReport r = AnalyzeMemoryPools(trace_);
  ASSERT_EQ(r.pools.size(), 3u);
  // By device, then address: GPU 0's default pool, then GPU 1's imported and local pools.
  const MemoryPoolStats& p0 = r.pools[0];
  EXPECT_TRUE(p0.details);
  EXPECT_EQ(p0.device_id, 0u);
  EXPECT_EQ(p0.pool_address, 0x7e0000000000u);
  EXPECT_EQ(p0.pool_type, kPoolTypeLocal);
  EXPECT_EQ(p0.allocations, 4u);
  EXPECT_EQ(p0.allocated_bytes, 32 * kMiB);
  EXPECT_EQ(p0.releases, 4u);
  EXPECT_EQ(p0.released_bytes, 32 * kMiB);
  EXPECT_EQ(p0.release_threshold, 0u);
  EXPECT_FALSE(p0.threshold_changed);
  EXPECT_EQ(p0.peak_pool_bytes, 32 * kMiB);
  EXPECT_EQ(p0.peak_used_bytes, 8 * kMiB);

  const MemoryPoolStats& imported = r.pools[1];
  EXPECT_EQ(imported.device_id, 1u);
  EXPECT_EQ(imported.pool_type, kPoolTypeImported);
  EXPECT_EQ(imported.allocations, 1u);
  EXPECT_EQ(imported.peak_pool_bytes, 0u);
  EXPECT_FALSE(imported.details);

  const MemoryPoolStats& p1 = r.pools[2];
  EXPECT_EQ(p1.pool_address, 0x7d0000000000u);
  EXPECT_EQ(p1.allocations, 2u);
  EXPECT_EQ(p1.releases, 0u);
  EXPECT_EQ(p1.release_threshold, UINT64_MAX);  // the last one
  EXPECT_TRUE(p1.threshold_changed);
  EXPECT_EQ(p1.peak_pool_bytes, 32 * kMiB);
  EXPECT_EQ(p1.peak_used_bytes, 32 * kMiB);
}

TEST_F(MemoryPoolsTest, FormatsShowPoolsOnlyWhenThereAreSome) {
  const MemoryPoolReport r = AnalyzeMemoryPools(trace_);
  const std::string table = MemoryPoolsTable(r, 120);
  EXPECT_NE(table.find("7 pooled allocations"), std::string::npos) << table;
  EXPECT_NE(table.find("none (keeps all) (changed)"), std::string::npos) << table;
  EXPECT_NE(table.find("imported"), std::string::npos) << table;
  // GPU 0's pool keeps the default threshold: the note says what it costs.
  EXPECT_NE(table.find("Release threshold 0 B (CUDA's default)"), std::string::npos) << table;
  EXPECT_NE(MemoryPoolsCsvRows(r).find("pool,"), std::string::npos);
  const std::vector<MemoryPoolReport> pools = {r};
  const std::string json = MemoryJson({AnalyzeMemory(trace_)}, nullptr, nullptr, &pools);
  EXPECT_NE(json.find("\"memory_pools\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"release_threshold_changed\": true"), std::string::npos) << json;

  // A trace of a libprof that recorded no pool details: the pool is listed, its threshold and
  // sizes left empty (not shown as 0 B), and no note about the default threshold.
  TraceBuilder older = MemoryPoolScenario();
  for (MemoryOp& op : older.records().memory_ops) {
    op.pool_release_threshold = op.pool_bytes = op.pool_used_bytes = 0;
  }
  const MemoryPoolReport old = AnalyzeMemoryPools(older.RoundTrip(dir_.Path("older.pb")));
  ASSERT_EQ(old.pools.size(), 3u);
  EXPECT_FALSE(old.pools[0].details);
  const std::string old_table = MemoryPoolsTable(old, 160);
  EXPECT_EQ(old_table.find(" 0 B "), std::string::npos) << old_table;
  EXPECT_EQ(old_table.find("CUDA's default"), std::string::npos) << old_table;

  TraceBuilder direct;
  direct.AddContext(1, 7);
  MemoryOp op;
  op.operation = MemoryOperation::kAllocation;
  op.memory_kind = MemoryKind::kDevice;
  op.bytes = kMiB;
  direct.records().memory_ops.push_back(op);
  const MemoryPoolReport none = AnalyzeMemoryPools(direct.RoundTrip(dir_.Path("direct.pb")));
  EXPECT_TRUE(none.pools.empty());
  EXPECT_EQ(none.direct_allocations, 1u);
  EXPECT_EQ(MemoryPoolsTable(none, 120), "");
  EXPECT_EQ(MemoryPoolsCsvRows(none), "");
}

}  // namespace
}  // namespace libprof::analysis::testing
