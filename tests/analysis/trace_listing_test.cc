// Proves the trace listing interleaves host and device rows by time, nests NVTX ranges and
// hides noise unless --raw.
#include "analysis/reports/trace_listing.h"

#include <gtest/gtest.h>

#include "tests/analysis/scenarios.h"

namespace libprof::analysis::testing {
namespace {

TEST(TraceListingTest, ChronologicalWithDetails) {
  const std::vector<ListingRow> rows = TraceRows(Nrm2Scenario().Build(), /*raw=*/false);
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_LE(rows[i - 1].start_ns, rows[i].start_ns);
  // Noise and nested calls are hidden by default.
  for (const ListingRow& r : rows) {
    EXPECT_NE(r.name, "cudaGetLastError");
    EXPECT_NE(r.name, "cuLaunchKernel");
  }
  const auto kernel = std::find_if(rows.begin(), rows.end(),
                                   [](const ListingRow& r) { return r.kind == "kernel"; });
  ASSERT_NE(kernel, rows.end());
  EXPECT_EQ(kernel->details, "stream 7, grid (64,1,1) block (128,1,1), 32 regs, 1.00 KiB shared");
  EXPECT_EQ(kernel->device_id, 0u);
  EXPECT_FALSE(kernel->thread_id.has_value());
  const auto copy = std::find_if(rows.begin(), rows.end(),
                                 [](const ListingRow& r) { return r.kind == "memcpy"; });
  ASSERT_NE(copy, rows.end());
  EXPECT_EQ(copy->details, "stream 7, 4 B HtoD pageable→device, async");
  EXPECT_EQ(copy->bytes, 4u);
  // --raw shows them, nested calls one level deeper.
  const std::vector<ListingRow> raw = TraceRows(Nrm2Scenario().Build(), /*raw=*/true);
  EXPECT_GT(raw.size(), rows.size());
  const auto nested = std::find_if(raw.begin(), raw.end(),
                                   [](const ListingRow& r) { return r.name == "cuLaunchKernel"; });
  ASSERT_NE(nested, raw.end());
  EXPECT_EQ(nested->depth, 1u);
}

// Proves the listing shows a noise call when a context was created inside it, and hides the
// other calls of its name.
TEST(TraceListingTest, TheCallThatCreatedTheContextIsListed) {
  const std::vector<ListingRow> rows =
      TraceRows(FilteredCallCreatesTheContextScenario().Build(), /*raw=*/false);
  const auto named = [&](const std::string& name) {
    return std::count_if(rows.begin(), rows.end(),
                         [&](const ListingRow& r) { return r.name == name; });
  };
  EXPECT_EQ(named("cudaDeviceGetStreamPriorityRange"), 1);
  EXPECT_EQ(named("cudaGetDevice"), 0);
  EXPECT_EQ(named("cudaStreamIsCapturing"), 0);
  EXPECT_EQ(named("cudaLaunchKernel"), 1);
}

TEST(TraceListingTest, NvtxRangesNestPerThread) {
  const std::vector<ListingRow> rows = TraceRows(ThreadsScenario().Build(), false);
  for (const ListingRow& r : rows) {
    if (r.kind == "nvtx" && r.name == "step") {
      EXPECT_EQ(r.depth, 0u);
    }
    if (r.kind == "nvtx" && r.name == "copy") {
      EXPECT_EQ(r.depth, 1u);
    }
    if (r.name == "cudaMemcpyAsync") {
      EXPECT_EQ(r.depth, 2u);  // inside step › copy on its thread
    }
    if (r.name == "cudaLaunchKernel" && r.start_ns < 1'000'000) {
      EXPECT_EQ(r.depth, 1u);  // inside step only
    }
  }
  // A range comes before the calls it contains when they start together.
  const std::string csv = TraceCsv(rows);
  EXPECT_NE(csv.find("pid,id,start_ns"), std::string::npos);
  const std::string json = TraceJson(rows);
  EXPECT_NE(json.find("\"kind\": \"nvtx\""), std::string::npos);
  EXPECT_NE(TraceTable(rows, 120).find("▼ step"), std::string::npos);
}

TEST(TraceListingTest, EmptyTrace) {
  TraceBuilder b;
  b.SetEnd(5);
  EXPECT_TRUE(TraceRows(b.Build(), false).empty());
  EXPECT_EQ(TraceTable({}, 120), "No activity was recorded.\n");
}

}  // namespace
}  // namespace libprof::analysis::testing
