// Proves the parts of `profview report` that a browser cannot judge: the numbers behind its
// pictures (per-bin busy time, utilisation per device, device memory over time against
// `profview memory`'s peak, unified-memory migrations over time against `profview memory`'s
// migrations, copy bandwidth and its limit), HTML escaping, that the page holds
// every section, the lanes and the blocked-call marks the trace calls for, that a dense lane is
// drawn per pixel so the page stays small, and that a bad trace or output leaves no page.
// (tests/report/ renders the pages in a real browser.)
#include "analysis/reports/html_report.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "analysis/commands.h"
#include "analysis/metrics/copy_bandwidth.h"
#include "analysis/metrics/memory.h"
#include "analysis/metrics/memory_timeline.h"
#include "analysis/metrics/time_bins.h"
#include "analysis/metrics/unified_memory.h"
#include "analysis/metrics/utilization.h"
#include "analysis/model/trace_index.h"
#include "analysis/reports/html_writer.h"
#include "tests/analysis/scenarios.h"

namespace libprof::analysis::testing {
namespace {

constexpr uint64_t kMiB = 1 << 20;

std::string Report(const std::vector<ProcessTrace>& traces, const HtmlReportOptions& options = {}) {
  std::ostringstream out;
  auto stats = WriteHtmlReport(traces, options, &out);
  EXPECT_TRUE(stats.has_value()) << stats.error();
  return out.str();
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(TimeBinsTest, SplitsAnIntervalOverTheBinsItCovers) {
  TimeBins bins(1000, 2000, 4);  // bins of 250 ns
  bins.Add(1100, 1600);          // 150 in bin 0, 250 in bin 1, 100 in bin 2
  bins.Add(0, 1050);             // clipped: 50 in bin 0
  bins.Add(1900, 5000);          // clipped: 100 in bin 3
  EXPECT_DOUBLE_EQ(bins.Covered(0), 200);
  EXPECT_DOUBLE_EQ(bins.Covered(1), 250);
  EXPECT_DOUBLE_EQ(bins.Covered(2), 100);
  EXPECT_DOUBLE_EQ(bins.Covered(3), 100);
  EXPECT_DOUBLE_EQ(bins.Fraction(1), 1.0);
  EXPECT_EQ(bins.BinStart(2), 1500u);
}

TEST(UtilizationTest, CountsOverlappingStreamsOncePerDevice) {
  TraceBuilder b;
  // Two kernels on two streams overlapping in [20, 30) µs: busy [10, 40) µs = 30 µs.
  b.Launch("_Z1av", 0, 5, 10, 30, 13);
  b.Launch("_Z1bv", 6, 9, 20, 40, 14);
  b.SetEnd(100);
  const ProcessTrace t = b.Build();
  const TraceIndex index(t);
  const auto devices = UtilizationOverTime(index, Us(0), Us(100), 10);  // 10 µs slices
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].busy_ns, 30'000u);
  const std::vector<double> expected = {0, 1, 1, 1, 0, 0, 0, 0, 0, 0};
  ASSERT_EQ(devices[0].busy.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_DOUBLE_EQ(devices[0].busy[i], expected[i]) << i;
}

MemoryOp Alloc(uint64_t t_us, uint64_t address, uint64_t bytes, bool release,
               MemoryKind kind = MemoryKind::kDevice) {
  MemoryOp op;
  op.operation = release ? MemoryOperation::kRelease : MemoryOperation::kAllocation;
  op.memory_kind = kind;
  op.address = address;
  op.bytes = bytes;
  op.time_ns = Us(static_cast<double>(t_us));
  return op;
}

TEST(MemoryTimelineTest, StepsFollowAllocationsAndMatchedFrees) {
  TraceRecords r;
  r.memory_ops = {Alloc(30, 0xB, 2 * kMiB, false), Alloc(10, 0xA, 4 * kMiB, false),
                  Alloc(20, 0xF, 8 * kMiB, false, MemoryKind::kPinned),  // not device memory
                  Alloc(40, 0xA, 4 * kMiB, true), Alloc(50, 0xDEAD, kMiB, true),  // unmatched
                  Alloc(60, 0xB, 2 * kMiB, true)};
  const auto series = DeviceMemoryOverTime(r);
  ASSERT_EQ(series.size(), 1u);
  const std::vector<std::pair<uint64_t, uint64_t>> expected = {
      {Us(10), 4 * kMiB}, {Us(30), 6 * kMiB}, {Us(40), 2 * kMiB}, {Us(60), 0}};
  ASSERT_EQ(series[0].steps.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(series[0].steps[i].time_ns, expected[i].first) << i;
    EXPECT_EQ(series[0].steps[i].bytes, expected[i].second) << i;
  }
  EXPECT_EQ(series[0].peak_bytes, 6 * kMiB);
}

// The chart and `profview memory` must agree on recorded traces (the same definition, two
// implementations until issue 12's analysis replaces memory_timeline).
TEST(MemoryTimelineTest, PeakIsProfviewMemorysPeakOnRecordedTraces) {
  for (const char* name : {"alloc_loop.pb", "normalize_nrm2.pb", "stream_overlap.pb"}) {
    std::vector<std::string> warnings;
    auto loaded = LoadTraceFile(std::string(LIBPROF_SAMPLE_TRACES) + "/" + name, &warnings);
    ASSERT_TRUE(loaded.has_value()) << loaded.error();
    const ProcessTrace& t = loaded->front();
    const MemoryReport memory = AnalyzeMemory(t);
    const auto series = DeviceMemoryOverTime(t.records);
    ASSERT_EQ(series.size(), memory.devices.size()) << name;
    for (size_t i = 0; i < series.size(); ++i) {
      EXPECT_EQ(series[i].device_id, memory.devices[i].device_id) << name;
      EXPECT_EQ(series[i].peak_bytes, memory.devices[i].peak_bytes) << name;
      EXPECT_EQ(series[i].steps.back().bytes, memory.devices[i].end_bytes) << name;
    }
  }
}

TEST(CopyBandwidthTest, AchievedBestAndTheDeviceMemoryLimit) {
  TraceBuilder b;
  DeviceInfo gpu;
  gpu.memory_clock_khz = 2'619'000;  // an H100 SXM's HBM3: 2.619 GHz, 5120 bits
  gpu.memory_bus_width_bits = 5120;
  b.header().devices.push_back(gpu);
  // Two 1 MB device-to-device copies, 10 µs and 40 µs: 100 GB/s and 25 GB/s, 40 GB/s overall.
  b.AddMemcpy(CopyKind::kDtoD, MemoryKind::kDevice, MemoryKind::kDevice, 1'000'000, 0, 10, 1, 7,
              true);
  b.AddMemcpy(CopyKind::kDtoD, MemoryKind::kDevice, MemoryKind::kDevice, 1'000'000, 20, 60, 2, 7,
              true);
  b.AddMemcpy(CopyKind::kHtoD, MemoryKind::kPinned, MemoryKind::kDevice, 500'000, 70, 80, 3, 7,
              true);
  b.SetEnd(100);
  const ProcessTrace t = b.Build();
  const TraceIndex index(t);
  const auto rows = CopyBandwidthByKind(index);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].copy_kind, CopyKind::kDtoD);  // the longest total time first
  EXPECT_EQ(rows[0].count, 2u);
  EXPECT_DOUBLE_EQ(rows[0].best_gb_per_s, 100.0);
  ASSERT_TRUE(rows[0].limit_gb_per_s.has_value());
  EXPECT_NEAR(*rows[0].limit_gb_per_s, 2.619e9 * 2 * 5120 / 8 / 1e9 / 2, 1e-6);  // 1676 GB/s
  EXPECT_EQ(rows[1].copy_kind, CopyKind::kHtoD);
  EXPECT_FALSE(rows[1].limit_gb_per_s.has_value());  // the host link is not in the trace
}

TEST(HtmlWriterTest, EscapesMarkupAndRepairsBadUtf8) {
  EXPECT_EQ(HtmlEscape("a<b>&\"c\"'"), "a&lt;b&gt;&amp;&quot;c&quot;&#39;");
  EXPECT_EQ(HtmlEscape("µs › ok"), "µs › ok");
  EXPECT_EQ(HtmlEscape(std::string("x\xff" "y")), "x\xEF\xBF\xBDy");
  EXPECT_EQ(Coord(12.0), "12");
  EXPECT_EQ(Coord(12.34), "12.3");
  EXPECT_EQ(Coord(-0.01), "0");
}

// The migration chart's series and `profview memory`'s migration rows: the same directions in the
// same order, with the same bytes; each series rises to its total at its last migration's end.
TEST(MigrationChartTest, SeriesAreTheMemoryReportsMigrations) {
  TempDir dir;
  const ProcessTrace t = UnifiedMemoryScenario().RoundTrip(dir.Path("uvm.pb"));
  const std::vector<UvmMigrationSeries> series = UvmMigrationsOverTime(t.records);
  const UnifiedMemoryReport report = AnalyzeUnifiedMemory(t);
  ASSERT_EQ(series.size(), report.migrations.size());
  ASSERT_EQ(series.size(), 2u);
  for (size_t i = 0; i < series.size(); ++i) {
    EXPECT_EQ(series[i].src_device_id, report.migrations[i].src_device_id);
    EXPECT_EQ(series[i].dst_device_id, report.migrations[i].dst_device_id);
    EXPECT_EQ(series[i].total_bytes, report.migrations[i].bytes);
    EXPECT_EQ(series[i].steps.back().bytes, series[i].total_bytes);
  }
  // Host → device: 128 back-to-back migrations of 2 MiB, 80 µs each, from 1100 µs: the first step
  // at 1180 µs holds 2 MiB.
  EXPECT_EQ(series[0].steps.size(), 128u);
  EXPECT_EQ(series[0].steps[0].bytes, 2 * kMiB);
  EXPECT_EQ(series[0].steps[0].time_ns, t.records.unified_memory_counters[1].end_ns);
  // The page draws them in the memory section; a trace without migrations draws no such chart.
  const std::string page = Report({t});
  EXPECT_NE(page.find("data-direction=\"host → device\" data-bytes=\"268435456\""),
            std::string::npos);
  EXPECT_NE(page.find("data-direction=\"device → host\" data-bytes=\"268435456\""),
            std::string::npos);
  EXPECT_EQ(Report({Nrm2Scenario().Build()}).find("chart migrations"), std::string::npos);
}

TEST(HtmlReportTest, HasEverySectionTheLanesAndTheBlockedCall) {
  const std::string page = Report({Nrm2Scenario().Build()});
  for (const char* id : {"p0-headline", "p0-findings", "p0-timeline", "p0-details",
                         "p0-utilization", "p0-memory", "p0-bandwidth", "p0-summary"}) {
    EXPECT_NE(page.find("id=\"" + std::string(id) + "\""), std::string::npos) << id;
  }
  EXPECT_EQ(page.find("id=\"overview\""), std::string::npos);  // one process: no overview
  // One thread lane and one stream lane, in the overview and in each detail view.
  EXPECT_NE(page.find("data-kind=\"thread\" data-thread=\"1\""), std::string::npos);
  EXPECT_NE(page.find("data-kind=\"stream\" data-device=\"0\" data-stream=\"7\""),
            std::string::npos);
  // The 4.9 ms cudaMemcpyAsync (corr 7 in the scenario: the call after the 6 before it) waited
  // for the nrm2 kernels on stream 7: a mark from thread 1 to stream 7 on the whole-trace view.
  const std::regex mark(
      "<g class=\"blocked\" data-thread=\"1\" data-corr=\"(\\d+)\" data-device=\"0\" "
      "data-stream=\"7\" data-op-corr=\"(\\d+)\" data-blocked-ns=\"(\\d+)\"");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(page, m, mark)) << page.substr(0, 3000);
  EXPECT_GT(std::stoull(m[3]), 4'900'000u);
  // The names and numbers of the terminal: the summary's headline and the findings' rule.
  EXPECT_NE(page.find("calling CUDA APIs took"), std::string::npos);
  EXPECT_NE(page.find("blocked-on-prior-work"), std::string::npos);
  // Self-contained: no script, stylesheet, image or font fetched from anywhere.
  EXPECT_EQ(page.find("src="), std::string::npos);
  EXPECT_EQ(page.find("http://"), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
}

// Threads that call CUDA come first, then the streams, then threads with NVTX ranges only (a
// JAX process had 20 such compile threads above its one stream): their lanes' y order says so.
TEST(HtmlReportTest, ThreadsWithNvtxRangesOnlyComeAfterTheStreams) {
  TraceBuilder b = Nrm2Scenario();
  b.AddRange("compile", 0, 500, /*tid=*/2);
  const std::string page = Report({b.Build()});
  const auto y0_of = [&](const std::string& lane) {
    const size_t at = page.find(lane);
    EXPECT_NE(at, std::string::npos) << lane;
    const size_t y = page.find("data-y0=\"", at);
    return std::stod(page.substr(y + 9));
  };
  const double caller = y0_of("data-kind=\"thread\" data-thread=\"1\"");
  const double stream = y0_of("data-kind=\"stream\" data-device=\"0\" data-stream=\"7\"");
  const double nvtx_only = y0_of("data-kind=\"thread\" data-thread=\"2\"");
  EXPECT_LT(caller, stream);
  EXPECT_LT(stream, nvtx_only);
}

// A program that names thousands of ranges (XLA: one per compiled module and pass) gets the 100
// with the most time in the page's NVTX table and a note on the rest; a short table, no note.
TEST(HtmlReportTest, SummaryTablesShowTheRowsWithTheMostTime) {
  TraceBuilder b = Nrm2Scenario();
  for (int k = 0; k < 150; ++k) {  // range_k lasts k + 1 µs
    b.AddRange("range_" + std::to_string(k), 10 * k, 10 * k + k + 1, /*tid=*/2);
  }
  const std::string page = Report({b.Build()});
  const size_t table = page.find("class=\"data nvtx-table\"");
  ASSERT_NE(table, std::string::npos);
  const std::string nvtx = page.substr(table, page.find("</table>", table) - table);
  size_t rows = 0;
  for (size_t at = nvtx.find("<tr"); at != std::string::npos; at = nvtx.find("<tr", at + 1)) {
    ++rows;
  }
  EXPECT_EQ(rows, 1u + 100u);  // the header and the longest hundred
  EXPECT_NE(nvtx.find(">range_149<"), std::string::npos);
  EXPECT_NE(nvtx.find(">range_50<"), std::string::npos);
  EXPECT_EQ(nvtx.find(">range_49<"), std::string::npos);
  // The 50 left out last 1 + 2 + ... + 50 µs.
  EXPECT_NE(page.find("The 100 rows with the most time of 150 are shown; the other 50 took "
                      "1.27 ms in all. profview summary --rows 0 lists every row."),
            std::string::npos);
  EXPECT_EQ(Report({Nrm2Scenario().Build()}).find("rows with the most time"), std::string::npos);
}

// The top findings' table names each group's caller, as the terminal table does, when stacks
// were recorded; without stacks it has no such column.
TEST(HtmlReportTest, TopFindingsSayWhereTheyWereCalledFrom) {
  const auto table_of = [](const std::string& page) {
    const size_t at = page.find("class=\"data findings-table\"");
    return at == std::string::npos ? std::string()
                                   : page.substr(at, page.find("</table>", at) - at);
  };
  const std::string with = table_of(Report({CallSitesScenario().Build()}));
  ASSERT_FALSE(with.empty());
  EXPECT_NE(with.find("<th>Called from</th>"), std::string::npos) << with;
  EXPECT_NE(with.find(">NormalizeLoop (app)<"), std::string::npos) << with;
  const std::string without = table_of(Report({Nrm2Scenario().Build()}));
  ASSERT_FALSE(without.empty());
  EXPECT_EQ(without.find("Called from"), std::string::npos) << without;
}

// A copy the reader ended early (proto/stream_order_repair.h) is said in the headline's note, as
// summary says it under its device table.
TEST(HtmlReportTest, HeadlineSaysWhenCopiesWereEndedEarly) {
  TraceBuilder b = Nrm2Scenario();
  const std::string plain = Report({b.Build()});
  EXPECT_EQ(plain.find("had an end from CUPTI"), std::string::npos);
  const uint64_t call = b.Api("cudaMemcpyAsync", 600, 610);
  b.AddMemcpy(CopyKind::kDtoD, MemoryKind::kDevice, MemoryKind::kDevice, 4096, 611, 612, call, 7,
              true)
      .cupti_end_ns = 50'000'000;
  const std::string page = Report({b.Build()});
  EXPECT_NE(page.find("1 copy or memset had an end from CUPTI after the next operation on its "
                      "stream started, which a stream&#39;s order rules out: it is ended at "
                      "that start; profview trace shows CUPTI&#39;s end."),  // (escaped)
            std::string::npos);
}

// A recording without its end record (the process skipped libprof's exit handler) says so in
// the headline's note, as profview's readers warn on stderr; one with its end does not.
TEST(HtmlReportTest, HeadlineSaysWhenTheRecordingHasNoEnd) {
  TraceBuilder b = Nrm2Scenario();
  EXPECT_EQ(Report({b.Build()}).find("has no end record"), std::string::npos);
  b.SetEnd(0);
  const std::string page = Report({b.Build()});
  EXPECT_NE(page.find("The recording has no end record: the process ended without libprof&#39;s "
                      "exit handler (os._exit, SIGKILL, abort or a crash), so what it did in "
                      "about its last 2.0 s (two flush intervals), or longer where the GPU was "
                      "busy, was never written."),
            std::string::npos);
}

// Start-up (here up to 86.09 ms, the start-up finding's end) is shaded in the overview (and in
// the view of where the GPU ran work, when there is one), and said under them; a trace without
// one has no band.
TEST(HtmlReportTest, StartUpIsShadedOnTheTimeline) {
  const std::string page = Report({StartUpScenario().Build()});
  const std::string band =
      "<g class=\"start-up\" data-end-ns=\"" + std::to_string(Us(86090)) + "\">";
  const size_t views = page.find("id=\"p0-active-svg\"") == std::string::npos ? 1 : 2;
  EXPECT_EQ(Count(page, band), views);
  EXPECT_NE(page.find("start-up, paid once ◂"), std::string::npos);
  EXPECT_NE(page.find("Start-up (the start-up finding: paid once, left out of the GPU rules) is "
                      "shaded grey."),
            std::string::npos);
  TraceBuilder empty;
  empty.SetEnd(10);
  EXPECT_EQ(Report({empty.Build()}).find("class=\"start-up\""), std::string::npos);
}

// One-time work (an XLA autotuner's candidates, told by the stack of their syncs) is shaded on the
// timeline from its first call to its last, named, and said under it; a trace without stacks has
// no such band.
TEST(HtmlReportTest, OneTimeWorkIsShadedOnTheTimeline) {
  auto scenario = [](bool stacks) {
    TraceBuilder b;
    TraceRecords& r = b.records();
    r.stack_frames.push_back({.id = 1, .address = 0x1000,
                              .function_id = b.Intern("xla::Autotuner::GetTunedConfig")});
    r.call_stacks.push_back({.id = 1, .frame_ids = {1}});
    for (int i = 0; i < 5; ++i) b.Launch("step", 100 + 100 * i, 105 + 100 * i, 110 + 100 * i, 120 + 100 * i, 7);
    for (int c = 0; c < 2; ++c) {
      const double t = 1000 + 3000 * c;
      b.Launch("candidate", t, t + 5, t + 10, t + 110, 7, 200);
      b.Api("cuStreamSynchronize", t + 6, t + 111, 200);
      if (stacks) b.records().api_calls.back().stack_id = 1;
    }
    for (int i = 0; i < 5; ++i) b.Launch("step", 9000 + 100 * i, 9005 + 100 * i, 9010 + 100 * i, 9020 + 100 * i, 7);
    b.SetEnd(10000);
    return b;
  };
  const std::string page = Report({scenario(true).Build()});
  const std::string band = "<g class=\"one-time\" data-start-ns=\"" + std::to_string(Us(1006)) +
                           "\" data-end-ns=\"" + std::to_string(Us(4111)) +
                           "\"><title>XLA&#39;s autotuning, paid once</title>";
  EXPECT_GE(Count(page, band), 1u) << page.substr(page.find("one-time"), 400);
  EXPECT_NE(page.find(">XLA&#39;s autotuning</text>"), std::string::npos);
  EXPECT_NE(page.find("One-time work after it (an autotuner or a compiler, told from call stacks: "
                      "paid once, its idle gaps left out of the GPU rules) is shaded purple."),
            std::string::npos);
  EXPECT_EQ(Report({scenario(false).Build()}).find("class=\"one-time\""), std::string::npos);
}

TEST(HtmlReportTest, SeveralProcessesGetAnOverviewAndASectionEach) {
  TraceBuilder a = Nrm2Scenario();
  TraceBuilder b = LaunchBoundScenario();
  a.header().rank = 0;
  b.header().rank = 1;
  const std::string page = Report({a.Build(), b.Build()});
  EXPECT_NE(page.find("id=\"overview\""), std::string::npos);
  EXPECT_EQ(Count(page, "class=\"rank-strip\""), 2u);
  EXPECT_NE(page.find("id=\"p0-timeline\""), std::string::npos);
  EXPECT_NE(page.find("id=\"p1-timeline\""), std::string::npos);
}

// 50,000 kernels on one stream and their launches: far more slices than pixels. The page must
// not grow with them (each would cost ~150 bytes drawn one by one: 15 MB for the kernels alone).
TEST(HtmlReportTest, DenseLanesAreDrawnPerPixel) {
  TraceBuilder b;
  for (int i = 0; i < 50'000; ++i) {
    const double t = 10.0 * i;
    b.Launch("_Z4stepv", t, t + 4, t + 5, t + 9, 7);
  }
  b.SetEnd(500'010);
  const std::string page = Report({b.Build()});
  EXPECT_LT(page.size(), 1'000'000u);
  EXPECT_NE(page.find("dense"), std::string::npos);
  EXPECT_NE(page.find("50000 slices in view"), std::string::npos);
}

TEST(RunReportTest, AnUnreadableTraceLeavesNoPage) {
  TempDir dir;
  const std::string bad = dir.Path("bad.pb");
  std::ofstream(bad) << "not a trace";
  ReportCommandOptions options;
  options.files = {bad};
  options.output = dir.Path("run.html");
  std::vector<std::string> warnings;
  auto result = RunReport(options, &warnings);
  ASSERT_FALSE(result.has_value());
  EXPECT_NE(result.error().find("bad.pb"), std::string::npos) << result.error();
  // Neither the page nor its temporary file.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.Path("")),
                          std::filesystem::directory_iterator()),
            1);
}

TEST(RunReportTest, AnUnwritableOutputIsAnError) {
  TempDir dir;
  const std::string trace = dir.Path("t.pb");
  Nrm2Scenario().Write(trace);
  ReportCommandOptions options;
  options.files = {trace};
  options.output = dir.Path("missing-dir/run.html");
  std::vector<std::string> warnings;
  EXPECT_FALSE(RunReport(options, &warnings).has_value());
  options.output = dir.Path("run.html");
  auto written = RunReport(options, &warnings);
  ASSERT_TRUE(written.has_value()) << written.error();
  EXPECT_TRUE(std::filesystem::exists(options.output));
}

}  // namespace
}  // namespace libprof::analysis::testing
