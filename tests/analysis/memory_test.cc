// Proves `profview memory`'s figures on a hand-computable trace: counts, bytes and host time per
// API and kind; device memory peak (value, time, call) with releases matched by address; churn
// pairs grouped by API and size; an unmatched free; the implicit synchronisation of a cudaFree;
// the NVTX ranges open at the peak; and that every format renders.
#include "analysis/metrics/memory.h"

#include <gtest/gtest.h>

#include "tests/analysis/trace_builder.h"
#include "analysis/reports/memory_report.h"

namespace libprof::analysis::testing {
namespace {

constexpr uint64_t kMiB = 1 << 20;

// An API call [start, end) µs that allocated or released `bytes` at `address`.
uint64_t Op(TraceBuilder& b, std::string_view api, double start, double end,
            MemoryOperation operation, MemoryKind kind, uint64_t address, uint64_t bytes) {
  const uint64_t corr = b.Api(api, start, end);
  MemoryOp op;
  op.operation = operation;
  op.memory_kind = kind;
  op.address = address;
  op.bytes = bytes;
  op.time_ns = Us(start);
  op.correlation_id = corr;
  b.records().memory_ops.push_back(op);
  return corr;
}

constexpr auto kAlloc = MemoryOperation::kAllocation;
constexpr auto kFree = MemoryOperation::kRelease;

TraceBuilder Loop() {
  TraceBuilder b;
  // Three cudaMalloc/cudaFree pairs of 2 MiB at the same address: 10 µs + 20 µs each.
  for (int i = 0; i < 3; ++i) {
    const double t = 100.0 * i;
    Op(b, "cudaMalloc", t, t + 10, kAlloc, MemoryKind::kDevice, 0x1000, 2 * kMiB);
    Op(b, "cudaFree", t + 50, t + 70, kFree, MemoryKind::kDevice, 0x1000, 2 * kMiB);
  }
  // A kernel runs [46, 60) µs: the first cudaFree [50, 70) waits 10 µs for it.
  b.Launch("_Z1kPf", 40, 45, 46, 60, 7);
  // NVTX ranges open when the peak's call starts at 500 µs: "phase" › "inner"; "later" is not.
  b.AddRange("phase", 450, 600);
  b.AddRange("inner", 490, 510, 1, NvtxKind::kPushPop, 1);
  b.AddRange("later", 520, 530, 1, NvtxKind::kPushPop, 1);
  // A 4 MiB buffer live from 400 to 700 µs, and 1 MiB from 500 µs: peak 5 MiB at 500 µs.
  Op(b, "cudaMalloc", 400, 405, kAlloc, MemoryKind::kDevice, 0x9000, 4 * kMiB);
  Op(b, "cudaMallocAsync", 500, 501, kAlloc, MemoryKind::kDevice, 0xA000, kMiB);
  Op(b, "cudaFree", 700, 730, kFree, MemoryKind::kDevice, 0x9000, 4 * kMiB);
  // Pinned host memory: counted per API, not in device memory.
  Op(b, "cudaMallocHost", 800, 900, kAlloc, MemoryKind::kPinned, 0xF000, 8 * kMiB);
  // A free of an address never allocated in the trace.
  Op(b, "cudaFree", 950, 951, kFree, MemoryKind::kDevice, 0xDEAD, kMiB);
  b.SetEnd(1000);
  return b;
}

const MemoryApiStats* Find(const MemoryReport& r, const std::string& api) {
  for (const MemoryApiStats& s : r.apis) {
    if (s.api == api) return &s;
  }
  return nullptr;
}

TEST(MemoryTest, PerApiCountsBytesAndHostTime) {
  // Proves the per-API rows: counts, bytes, distinct calls and their summed duration.
  TempDir dir;
  const MemoryReport r = AnalyzeMemory(Loop().RoundTrip(dir.Path("t.pb")));
  ASSERT_EQ(r.apis.size(), 4u);
  const MemoryApiStats* malloc = Find(r, "cudaMalloc");
  ASSERT_NE(malloc, nullptr);
  EXPECT_EQ(malloc->allocations, 4u);
  EXPECT_EQ(malloc->allocated_bytes, 10 * kMiB);
  EXPECT_EQ(malloc->calls, 4u);
  EXPECT_EQ(malloc->host_ns, 35'000u);
  const MemoryApiStats* free = Find(r, "cudaFree");
  ASSERT_NE(free, nullptr);
  EXPECT_EQ(free->releases, 5u);
  EXPECT_EQ(free->released_bytes, 11 * kMiB);
  EXPECT_EQ(free->host_ns, 3 * 20'000u + 30'000u + 1'000u);
  // Only the first cudaFree found device work running: one implicit sync of 10 µs.
  EXPECT_EQ(free->implicit_syncs, 1u);
  EXPECT_EQ(free->sync_wait_ns, 10'000u);
  EXPECT_EQ(malloc->implicit_syncs, 0u);
  const MemoryApiStats* host = Find(r, "cudaMallocHost");
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->kind, MemoryKind::kPinned);
  EXPECT_EQ(host->host_ns, 100'000u);
}

TEST(MemoryTest, DevicePeakAndUnmatchedFree) {
  // Proves the running sum: peak 5 MiB first reached at 500 µs by cudaMallocAsync; 1 MiB left.
  TempDir dir;
  const MemoryReport r = AnalyzeMemory(Loop().RoundTrip(dir.Path("t.pb")));
  ASSERT_EQ(r.devices.size(), 1u);
  const DeviceMemoryPeak& d = r.devices[0];
  EXPECT_EQ(d.peak_bytes, 5 * kMiB);
  EXPECT_EQ(d.peak_time_ns, 500'000u);
  EXPECT_EQ(d.api, "cudaMallocAsync");
  EXPECT_EQ(d.thread_id, 1u);
  EXPECT_EQ(d.nvtx, (std::vector<std::string>{"phase", "inner"}));
  EXPECT_EQ(d.end_bytes, kMiB);
  EXPECT_EQ(d.unmatched_releases, 1u);
}

TEST(MemoryTest, ChurnGroupsBySizeAndApi) {
  // Proves churn: the three 2 MiB pairs form one group (3 × 30 µs); the single 4 MiB pair and
  // the never-freed buffers do not.
  TempDir dir;
  const MemoryReport r = AnalyzeMemory(Loop().RoundTrip(dir.Path("t.pb")));
  ASSERT_EQ(r.churn.size(), 1u);
  EXPECT_EQ(r.churn[0].api, "cudaMalloc");
  EXPECT_EQ(r.churn[0].free_api, "cudaFree");
  EXPECT_EQ(r.churn[0].bytes, 2 * kMiB);
  EXPECT_EQ(r.churn[0].pairs, 3u);
  EXPECT_EQ(r.churn[0].host_ns, 90'000u);
  EXPECT_EQ(r.churn[0].first_pair_host_ns, 30'000u);
  EXPECT_EQ(r.churn[0].implicit_syncs, 1u);
  EXPECT_EQ(r.churn[0].sync_wait_ns, 10'000u);
}

TEST(MemoryTest, FormatsRenderAndEmptyTrace) {
  // Proves every format renders the figures, and a trace without allocations says so.
  TempDir dir;
  const std::vector<MemoryReport> reports = {AnalyzeMemory(Loop().RoundTrip(dir.Path("t.pb")))};
  EXPECT_NE(MemoryTable(reports, 120).find("cudaMallocAsync"), std::string::npos);
  EXPECT_NE(MemoryCsv(reports).find("churn,4242,cudaMalloc,,,2097152,pairs,3"), std::string::npos);
  EXPECT_NE(MemoryJson(reports).find("\"peak_bytes\": 5242880"), std::string::npos);
  TraceBuilder empty;
  empty.SetEnd(10);
  const MemoryReport e = AnalyzeMemory(empty.RoundTrip(dir.Path("e.pb")));
  EXPECT_TRUE(e.apis.empty());
  EXPECT_NE(MemoryTable({e}, 120).find("No allocation records."), std::string::npos);
}

}  // namespace
}  // namespace libprof::analysis::testing
