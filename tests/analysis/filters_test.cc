// Proves --pid, --tid, --nvtx and --from/--to select the right records and window, and that a
// filter matching nothing is an error.
#include "analysis/model/filters.h"

#include <gtest/gtest.h>

#include "tests/analysis/scenarios.h"
#include "analysis/metrics/summary.h"

namespace libprof::analysis::testing {
namespace {

FilterOptions Pids(std::vector<uint32_t> v) {
  FilterOptions o;
  o.pids = std::move(v);
  return o;
}
FilterOptions Tids(std::vector<uint32_t> v) {
  FilterOptions o;
  o.tids = std::move(v);
  return o;
}
FilterOptions Nvtx(std::vector<std::string> v) {
  FilterOptions o;
  o.nvtx = std::move(v);
  return o;
}
FilterOptions Window(uint64_t from, uint64_t to) {
  FilterOptions o;
  o.from_ns = from;
  o.to_ns = to;
  return o;
}

std::vector<ProcessTrace> Apply(std::vector<ProcessTrace> traces, const FilterOptions& options) {
  auto out = ApplyFilters(std::move(traces), options);
  EXPECT_TRUE(out.has_value()) << out.error();
  return out.value_or(std::vector<ProcessTrace>{});
}

TEST(FiltersTest, PidKeepsOnlyThatProcess) {
  auto out = Apply({Nrm2Scenario().Build(), HostOnlyScenario().Build()}, Pids({8181}));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].header.pid, 8181u);
  auto missing = ApplyFilters({Nrm2Scenario().Build()}, Pids({1}));
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error(), "no process with pid 1 in the traces");
}

TEST(FiltersTest, ThreadKeepsItsCallsAndTheWorkTheyIssued) {
  auto out = Apply({ThreadsScenario().Build()}, Tids({101}));
  ASSERT_EQ(out.size(), 1u);
  const TraceRecords& r = out[0].records;
  for (const ApiCall& c : r.api_calls) EXPECT_EQ(c.thread_id, 101u);
  EXPECT_EQ(r.api_calls.size(), 3u);  // its launch, its copy, the "phase" launch
  EXPECT_EQ(r.kernels.size(), 2u);
  EXPECT_EQ(r.memcpys.size(), 1u);
  for (const NvtxEvent& e : r.nvtx_events) EXPECT_EQ(e.thread_id, 101u);
  EXPECT_FALSE(ApplyFilters({ThreadsScenario().Build()}, Tids({999})).has_value());
}

TEST(FiltersTest, NvtxKeepsActivityInsideTheRangeOnItsThread) {
  auto out = Apply({ThreadsScenario().Build()}, Nvtx({"copy"}));
  ASSERT_EQ(out.size(), 1u);
  const ProcessTrace& t = out[0];
  // Only the four cudaMemcpyAsync calls (the launches happen before "copy" opens).
  ASSERT_EQ(t.records.api_calls.size(), 4u);
  for (const ApiCall& c : t.records.api_calls) EXPECT_EQ(t.Str(c.name_id), "cudaMemcpyAsync");
  EXPECT_EQ(t.records.memcpys.size(), 4u);
  EXPECT_TRUE(t.records.kernels.empty());
  // The window is the union of the four "copy" ranges: [15,1110] ∪ [20,1315] ∪ [25,1520] ∪
  // [30,1725].
  EXPECT_EQ(t.window_ns(), (1725u - 15u) * 1000u);
  const Summary s = Summarize(t, {});
  EXPECT_LE(s.host_api_ns, s.trace_ns);
  // "domain:name" matches too; an unknown name is an error naming it.
  EXPECT_TRUE(NvtxNameMatches("torch:step", "torch", "step"));
  EXPECT_TRUE(NvtxNameMatches("torch: step", "torch", "step"));
  EXPECT_FALSE(NvtxNameMatches("jax:step", "torch", "step"));
  auto missing = ApplyFilters({ThreadsScenario().Build()}, Nvtx({"nope"}));
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error(), "no NVTX range named 'nope' in the traces");
}

// --nvtx keeps the work its ranges' calls issued, and says how much work that ran during the
// ranges it left out: the four threads' kernels start during the "copy" ranges ([15, 1725] µs)
// but were launched just before each thread's range opened (1000 + 1200 + 1400 + 1600 µs);
// the four 4 µs copies are kept.
TEST(FiltersTest, NvtxCountsTheWorkDuringTheRangesItLeavesOut) {
  FilterMatches matches;
  auto out = FilterProcesses({ThreadsScenario().Build()}, Nvtx({"copy"}), &matches);
  ASSERT_TRUE(out.has_value()) << out.error();
  EXPECT_EQ(matches.nvtx_device_ns, 5'216'000u);
  EXPECT_EQ(matches.nvtx_left_out_ns, 5'200'000u);
  const std::string w = NvtxLeftOutWarning("t.pb", FilterMatches{}, matches);
  EXPECT_EQ(w.rfind("t.pb: --nvtx kept 16.0 µs of the 5.22 ms of device work that ran during the "
                    "selected ranges",
                    0),
            0u)
      << w;
  // Nothing said when it kept three quarters or more, or the ranges saw no device work.
  FilterMatches most = matches;
  most.nvtx_left_out_ns = most.nvtx_device_ns / 4 - 1;
  EXPECT_EQ(NvtxLeftOutWarning("t.pb", FilterMatches{}, most), "");
  EXPECT_EQ(NvtxLeftOutWarning("t.pb", matches, matches), "");
}

TEST(FiltersTest, TimeWindowIsRelativeToTheRecordingStart) {
  auto out = Apply({Nrm2Scenario().Build()}, Window(59'000, 89'000));
  ASSERT_EQ(out.size(), 1u);
  const ProcessTrace& t = out[0];
  EXPECT_EQ(t.window_ns(), 30'000u);
  EXPECT_EQ(t.origin_ns, kT0);  // relative times still count from the recording start
  for (const ApiCall& c : t.records.api_calls) {
    EXPECT_GE(c.start_ns, Us(59));
    EXPECT_LT(c.start_ns, Us(89));
  }
  EXPECT_EQ(t.records.kernels.size(), 1u);  // the first kernel starts at 80 µs
  auto bad = ApplyFilters({Nrm2Scenario().Build()}, Window(10, 5));
  EXPECT_FALSE(bad.has_value());
}

}  // namespace
}  // namespace libprof::analysis::testing
