// Proves `profview report` in windows (html_process_report.h RenderProcessInWindows) against the
// whole-trace page as oracle: on random training loops delivered as libprof's flushes deliver
// them (two threads, nested NVTX ranges and now and then an epoch's range written at its end,
// kernels dense enough to be drawn per pixel, copies of every direction, memsets, allocations,
// a second device, synchronisations that wait for several pieces of work, a long start-up so
// that the span where the GPU ran work gets its own picture), read in many small windows, the
// page is byte for byte the whole trace's, for option sets that make findings, marks and detail
// views; the same through `profview report` of two files (the per-rank overview); and a trace
// the windows cannot answer (unified-memory counters) is left to the whole-trace path.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "analysis/commands.h"
#include "analysis/reports/html_process_report.h"
#include "analysis/reports/html_report.h"
#include "analysis/rules/windowed_findings.h"
#include "tests/analysis/trace_builder.h"

namespace libprof::analysis::testing {
namespace {

constexpr uint32_t kPid = 4242;

// Steps of a training loop after a long start-up; every step ends with its streams drained.
TraceBuilder ReportLoop(uint64_t seed, int steps, bool epoch_range) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(rng() % 10000) / 10000.0;
  };
  TraceBuilder b(kPid);
  b.AddContext(1, 0);
  b.AddStream(10, StreamType::kNonBlocking);
  b.AddStream(11, StreamType::kDefault);
  std::map<uint32_t, double> stream_free;
  uint64_t next_address = 0x1000;
  double now = 100;
  b.Api("cuInit", now, now + 150, kPid, 0, ApiDomain::kDriver);
  now += 200;
  // Start-up without device work: most of the trace for some seeds (an "active" picture).
  const double start_up = rng() % 2 ? uniform(20'000, 60'000) : uniform(100, 500);
  for (; now < start_up; now += uniform(50, 900)) b.Api("cudaGetDevice", now, now + 2, kPid);
  const double epoch_start = now;
  for (int step = 0; step < steps; ++step) {
    const double step_start = now;
    double step_end = now;
    for (uint32_t t = 0; t < 2; ++t) {
      const uint32_t tid = kPid + t;
      const uint32_t stream = t == 0 ? 10 : 11;
      double at = step_start + uniform(0, 3);
      const double range_start = at;
      const int kernels = 2 + static_cast<int>(rng() % 8);
      for (int k = 0; k < kernels; ++k) {
        const double call = uniform(1, 4);
        const double start = std::max(at + call + uniform(0.5, 2), stream_free[stream]);
        const double end = start + uniform(0.5, rng() % 20 == 0 ? 400 : 30);
        b.Launch("kernel_" + std::to_string(rng() % 4), at, at + call, start, end, stream, tid);
        stream_free[stream] = end;
        at += call + uniform(0.2, 1);
      }
      b.AddRange("forward", range_start, at, tid, NvtxKind::kPushPop, 1);
      switch (rng() % 5) {
        case 0: {
          const uint64_t corr = b.Api("cudaMemcpyAsync", at, at + 2, tid);
          const double start = std::max(at + 3, stream_free[stream]);
          b.AddMemcpy(CopyKind::kHtoD, MemoryKind::kPinned, MemoryKind::kDevice, 1 << 20, start,
                      start + uniform(5, 40), corr, stream, true);
          stream_free[stream] = start + 40;
          at += 3;
          break;
        }
        case 1: {
          const uint64_t corr = b.Api("cudaMemcpyAsync", at, at + 2, tid);
          const double start = std::max(at + 3, stream_free[stream]);
          b.AddMemcpy(CopyKind::kDtoD, MemoryKind::kDevice, MemoryKind::kDevice, 4 << 20, start,
                      start + uniform(5, 40), corr, stream, true);
          stream_free[stream] = start + 40;
          at += 3;
          break;
        }
        case 2: {
          const uint64_t corr = b.Api("cudaMemsetAsync", at, at + 1, tid);
          const double start = std::max(at + 2, stream_free[stream]);
          b.AddMemset(MemoryKind::kDevice, 1 << 16, start, start + uniform(1, 5), corr, stream,
                      true);
          stream_free[stream] = start + 5;
          at += 2;
          break;
        }
        case 3: {  // an allocation freed later in the step
          const uint64_t address = next_address;
          next_address += 0x100000;
          const uint64_t bytes = uint64_t{1} << (18 + rng() % 4);
          const uint64_t a = b.Api("cudaMalloc", at, at + uniform(3, 10), tid);
          b.records().memory_ops.push_back(MemoryOp{.operation = MemoryOperation::kAllocation,
                                                    .memory_kind = MemoryKind::kDevice,
                                                    .address = address,
                                                    .bytes = bytes,
                                                    .time_ns = Us(at) + 1000,
                                                    .correlation_id = a});
          at += 12;
          const double free_end = std::max(at + 3, stream_free[stream] + 1);
          const uint64_t f = b.Api("cudaFree", at, free_end, tid);
          b.records().memory_ops.push_back(MemoryOp{.operation = MemoryOperation::kRelease,
                                                    .memory_kind = MemoryKind::kDevice,
                                                    .address = address,
                                                    .bytes = bytes,
                                                    .time_ns = Us(at) + 1000,
                                                    .correlation_id = f});
          at = free_end + 0.5;
          break;
        }
        default:
          break;
      }
      if (t == 0 && rng() % 4 == 0) {  // device 1, now and then
        const uint64_t corr = b.Api("cudaLaunchKernel", at, at + 3, tid);
        b.AddKernel("on_gpu1", at + 5, at + 5 + uniform(5, 60), corr, 20).shape.device_id = 1;
        stream_free[20] = at + 70;
        at += 4;
      }
      // The step ends with its streams drained: a wait on several kernels.
      double drained = at + 1;
      for (const auto& [s, free] : stream_free) drained = std::max(drained, free + 1);
      const uint64_t corr = b.Api("cudaStreamSynchronize", at, drained, tid);
      b.AddSync(SyncType::kStreamSynchronize, at, drained, corr, stream);
      b.AddRange("step", range_start, drained + 0.5, tid);
      step_end = std::max(step_end, drained + 1);
    }
    now = step_end + uniform(1, 30);
  }
  if (epoch_range) b.AddRange("epoch", epoch_start, now, kPid);
  b.SetEnd(now + 10);
  // CUDA numbers calls as they start; the threads above were written one after another.
  b.NumberCallsByStart();
  return b;
}

std::vector<HtmlReportOptions> OptionSets() {
  HtmlReportOptions a;
  a.findings.min_wait_ns = 1'000;
  a.findings.gap_threshold_ns = 20'000;
  HtmlReportOptions b = a;
  b.raw = true;
  b.detail_views = 5;
  HtmlReportOptions c;  // the defaults
  return {a, b, c};
}

WindowLimits Limits(size_t cut_every) {
  WindowLimits limits;
  limits.horizon_ns = 200'000;  // the flushes below: 100 µs apart, device work 50 µs later
  limits.cut_every_records = cut_every;
  return limits;
}

std::string WholePage(const std::string& path, const HtmlReportOptions& options) {
  std::vector<std::string> warnings;
  auto loaded = LoadTraceFile(path, &warnings);
  EXPECT_TRUE(loaded.has_value());
  if (!loaded || loaded->size() != 1) return "";
  return RenderProcess(loaded->front(), 0, options).html;
}

TEST(HtmlReportWindowsTest, WindowsDrawTheWholeTracesPage) {
  TempDir dir;
  size_t exact = 0, several = 0, dense = 0, details = 0, active = 0, marks = 0;
  const int kSeeds = 12;
  for (int seed = 0; seed < kSeeds; ++seed) {
    std::mt19937_64 rng(seed);
    const TraceBuilder b = ReportLoop(seed, 40 + static_cast<int>(rng() % 40), seed % 3 == 0);
    const std::string path = dir.Path("loop" + std::to_string(seed) + ".pb");
    b.WriteFlushed(path, 100, 50);
    const WindowLimits limits = Limits(16 + rng() % 64);
    for (const HtmlReportOptions& options : OptionSets()) {
      auto windowed = RenderProcessInWindows(path, 0, options, false, limits);
      ASSERT_TRUE(windowed.has_value()) << windowed.error();
      if (!windowed->has_value()) continue;
      ++exact;
      auto plan = WindowedFindings::Plan(path, options.findings, limits);
      ASSERT_TRUE(plan.has_value());
      several += plan->windows() > 1;
      const std::string& page = (*windowed)->html;
      EXPECT_EQ(page, WholePage(path, options)) << "seed " << seed;
      dense += page.find(" dense\"") != std::string::npos;
      details += page.find("p0-detail-svg-") != std::string::npos;
      active += page.find("p0-active-svg") != std::string::npos;
      marks += page.find("<g class=\"blocked\"") != std::string::npos;
    }
  }
  // The windows answered for most traces, cut them into several windows, and the pages drew
  // what the comparison is about.
  EXPECT_GE(exact, 3u * kSeeds * 2 / 3);
  EXPECT_EQ(several, exact);
  EXPECT_GT(dense, 0u);
  EXPECT_GT(details, 0u);
  EXPECT_GT(active, 0u);
  EXPECT_GT(marks, 0u);
}

TEST(HtmlReportWindowsTest, ReportOfTwoFilesIsTheWholeTracesPage) {
  TempDir dir;
  std::vector<std::string> paths;
  std::vector<ProcessTrace> traces;
  for (int seed : {3, 4}) {
    TraceBuilder b = ReportLoop(seed, 30, false);
    b.header().pid = kPid + 10 * seed;
    b.header().rank = seed;
    paths.push_back(dir.Path("rank" + std::to_string(seed) + ".pb"));
    b.WriteFlushed(paths.back(), 100, 50);
    std::vector<std::string> warnings;
    auto loaded = LoadTraceFile(paths.back(), &warnings);
    ASSERT_TRUE(loaded.has_value());
    traces.push_back(std::move(loaded->front()));
  }
  std::ostringstream whole;
  ASSERT_TRUE(WriteHtmlReport(traces, HtmlReportOptions{}, &whole).has_value());
  ReportCommandOptions options;
  options.files = paths;
  options.output = dir.Path("ranks.html");
  std::vector<std::string> warnings;
  auto done = RunReport(options, &warnings);
  ASSERT_TRUE(done.has_value()) << done.error();
  std::ifstream in(options.output);
  std::stringstream written;
  written << in.rdbuf();
  EXPECT_NE(whole.str().find("id=\"overview\""), std::string::npos);
  EXPECT_EQ(written.str(), whole.str());
}

TEST(HtmlReportWindowsTest, UnifiedMemoryCountersAreLeftToTheWholeTrace) {
  TempDir dir;
  TraceBuilder b = ReportLoop(1, 10, false);
  UnifiedMemoryCounter u;
  u.counter_kind = UvmCounterKind::kBytesHtoD;
  u.value = 1 << 20;
  u.start_ns = Us(50);
  u.end_ns = Us(60);
  u.src_device_id = kUvmCpu;
  b.records().unified_memory_counters.push_back(u);
  const std::string path = dir.Path("uvm.pb");
  b.WriteFlushed(path, 100, 50);
  auto windowed = RenderProcessInWindows(path, 0, HtmlReportOptions{}, false, Limits(32));
  ASSERT_TRUE(windowed.has_value()) << windowed.error();
  EXPECT_FALSE(windowed->has_value());
}

}  // namespace
}  // namespace libprof::analysis::testing
