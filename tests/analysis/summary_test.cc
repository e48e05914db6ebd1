// Proves the summary's numbers: host time with nested calls and overlapping threads counted
// once, noise hidden unless --raw, GPU busy as a union, device totals equal to the records,
// copy and NVTX tables (GPU projection by thread), several processes, empty and host-only traces.
#include "analysis/metrics/summary.h"

#include <gtest/gtest.h>

#include "tests/analysis/scenarios.h"
#include "analysis/reports/summary_report.h"

namespace libprof::analysis::testing {
namespace {

const SummaryRow* Find(const std::vector<SummaryRow>& rows, const std::string& name) {
  for (const SummaryRow& r : rows) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

uint64_t DeviceRecordTotal(const TraceRecords& r) {
  uint64_t total = 0;
  for (const auto& k : r.kernels) total += k.end_ns - k.start_ns;
  for (const auto& m : r.memcpys) total += m.end_ns - m.start_ns;
  for (const auto& m : r.memsets) total += m.end_ns - m.start_ns;
  for (const auto& g : r.graph_traces) total += g.end_ns - g.start_ns;
  return total;
}

class SummaryTest : public ::testing::Test {
 protected:
  ProcessTrace Load(const TraceBuilder& b) { return b.RoundTrip(dir_.Path("t.pb")); }
  TempDir dir_;
};

TEST_F(SummaryTest, Nrm2MatchesHandComputedNumbers) {
  const ProcessTrace t = Load(Nrm2Scenario());
  const Summary s = Summarize(t, {});
  EXPECT_EQ(s.trace_ns, 5'033'000u);
  EXPECT_EQ(s.events, t.records.RecordCount());
  // Shown calls: [41,58.64] [60,77.64] [78,83.01] [86,88.15] [90,5030] [5030.5,5031.45].
  EXPECT_EQ(s.host_api_ns, 17'640u + 17'640u + 5'010u + 2'150u + 4'940'000u + 950u);
  const SummaryRow* memcpy = Find(s.host, "cudaMemcpyAsync");
  ASSERT_NE(memcpy, nullptr);
  EXPECT_EQ(memcpy->stats.count(), 2u);
  EXPECT_EQ(memcpy->stats.total(), 17'640u + 4'940'000u);
  EXPECT_EQ(memcpy->stats.min(), 17'640u);
  EXPECT_EQ(memcpy->stats.max(), 4'940'000u);
  EXPECT_EQ(s.host.front().name, "cudaMemcpyAsync");  // sorted by total time
  // Noise and nested driver calls are hidden by default...
  EXPECT_EQ(Find(s.host, "cudaGetLastError"), nullptr);
  EXPECT_EQ(Find(s.host, "cudaStreamGetCaptureInfo_v2"), nullptr);
  EXPECT_EQ(Find(s.host, "cuLaunchKernel"), nullptr);
  EXPECT_EQ(Find(s.host, "cudaFuncGetAttributes"), nullptr);
  EXPECT_EQ(s.hidden_calls, 10u);
  EXPECT_EQ(s.hidden_nested_calls, 4u);
  // ... and shown with --raw; nested calls still add no host time (union per thread).
  const Summary raw = Summarize(t, SummaryOptions{.raw = true});
  ASSERT_NE(Find(raw.host, "cudaGetLastError"), nullptr);
  EXPECT_EQ(Find(raw.host, "cudaGetLastError")->stats.count(), 4u);
  ASSERT_NE(Find(raw.host, "cuLaunchKernel"), nullptr);
  EXPECT_EQ(raw.host_api_ns, s.host_api_ns + 5 * 100u + 37'670u + 4 * 60u);
  EXPECT_EQ(raw.hidden_calls, 0u);
  // Device: kernels grouped by demangled name, copies named by memory kinds.
  const SummaryRow* kernel = Find(
      s.device, "nrm2_kernel<float, float, float, 1, 0, 128>(cublasNrm2Params<int, float, float>)");
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->stats.count(), 2u);
  EXPECT_EQ(kernel->stats.total(), 4'930'000u + 9'000u);
  const SummaryRow* down = Find(s.device, "[copy device to pageable memory]");
  ASSERT_NE(down, nullptr);
  EXPECT_TRUE(down->has_bytes);
  EXPECT_EQ(down->bytes, 4u);
  EXPECT_EQ(s.gpu_busy_ns, 715u + 4'930'000u + 9'000u + 1'910u);
  ASSERT_EQ(s.copies.size(), 2u);
  EXPECT_EQ(s.copies[0].copy_kind, CopyKind::kDtoH);
  EXPECT_EQ(s.copies[0].dst_kind, MemoryKind::kPageable);
}

// Proves the call that created the context is shown and counted in the host time, whatever its
// name, in memory and streamed alike, while its name's other calls stay hidden as noise.
TEST_F(SummaryTest, TheCallThatCreatedTheContextIsShown) {
  const TraceBuilder b = FilteredCallCreatesTheContextScenario();
  const ProcessTrace t = Load(b);
  const Summary s = Summarize(t, {});
  const SummaryRow* creating = Find(s.host, "cudaDeviceGetStreamPriorityRange");
  ASSERT_NE(creating, nullptr);
  EXPECT_EQ(creating->stats.count(), 1u);
  EXPECT_EQ(creating->stats.total(), 120'010'000u);
  EXPECT_EQ(Find(s.host, "cudaGetDevice"), nullptr);
  EXPECT_EQ(Find(s.host, "cudaStreamIsCapturing"), nullptr);
  EXPECT_EQ(s.hidden_calls, 3u);
  EXPECT_EQ(s.host_api_ns, 120'010'000u + 5'000u);  // and the launch
  std::vector<std::string> warnings;
  auto streamed = SummarizeFiles({dir_.Path("t.pb")}, {}, {}, &warnings);
  ASSERT_TRUE(streamed) << streamed.error();
  const SummaryRow* row = Find(streamed->total.host, "cudaDeviceGetStreamPriorityRange");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->stats.count(), 1u);
  EXPECT_EQ(streamed->total.hidden_calls, 3u);
}

TEST_F(SummaryTest, DeviceTotalsEqualTheRecords) {
  for (const TraceBuilder& b :
       {Nrm2Scenario(), StreamsScenario(), ThreadsScenario(), IdleScenario()}) {
    const ProcessTrace t = Load(b);
    const Summary s = Summarize(t, {});
    uint64_t rows = 0;
    for (const SummaryRow& r : s.device) rows += r.stats.total();
    EXPECT_EQ(rows, DeviceRecordTotal(t.records));
    uint64_t calls = 0;
    for (const SummaryRow& r : s.device) calls += r.stats.count();
    EXPECT_EQ(calls,
              t.records.kernels.size() + t.records.memcpys.size() + t.records.memsets.size());
    // Busy time is a union: at most the sum, at most the trace.
    EXPECT_LE(s.gpu_busy_ns, rows);
    EXPECT_LE(s.gpu_busy_ns, s.trace_ns);
    EXPECT_LE(s.host_api_ns, s.trace_ns);
  }
}

TEST_F(SummaryTest, OverlappingStreamsAreNotDoubleCounted) {
  TraceBuilder b;
  b.Launch("_Z1aPf", 0, 1, 10, 110, 13);   // 100 µs on stream 13
  b.Launch("_Z1bPf", 2, 3, 60, 160, 14);   // 100 µs on stream 14, 50 overlapping
  b.Launch("_Z1cPf", 4, 5, 200, 210, 13);  // 10 µs later
  b.SetEnd(300);
  const Summary s = Summarize(Load(b), {});
  EXPECT_EQ(s.gpu_busy_ns, 150'000u + 10'000u);
}

TEST_F(SummaryTest, ThreadsAreCombinedByUnion) {
  // Two threads in API calls at the same time: the headline counts the wall time once; the
  // row total is the sum of the calls.
  TraceBuilder b;
  b.Api("cudaMalloc", 0, 100, /*tid=*/1);
  b.Api("cudaMalloc", 50, 150, /*tid=*/2);
  b.Api("cudaMalloc", 300, 310, /*tid=*/2);
  b.SetEnd(1000);
  const Summary s = Summarize(Load(b), {});
  EXPECT_EQ(s.host_api_ns, 160'000u);
  EXPECT_EQ(Find(s.host, "cudaMalloc")->stats.total(), 210'000u);
}

TEST_F(SummaryTest, NestingWithoutTheFlagIsDetectedFromIntervals) {
  // A driver call inside a runtime call of the same thread, recorded without `nested`.
  TraceBuilder b;
  b.Api("cudaMemcpy", 0, 100, 1);
  b.Api("cuMemcpyDtoH_v2", 10, 90, 1, 0, ApiDomain::kDriver, /*nested=*/false);
  b.Api("cuMemcpyDtoH_v2", 10, 90, 2, 0, ApiDomain::kDriver, false);  // other thread: top level
  b.SetEnd(200);
  const Summary s = Summarize(Load(b), {});
  EXPECT_EQ(Find(s.host, "cuMemcpyDtoH_v2")->stats.count(), 1u);
  EXPECT_EQ(s.hidden_nested_calls, 1u);
  EXPECT_EQ(s.host_api_ns, 100'000u);
}

TEST_F(SummaryTest, NvtxGpuProjectionFollowsTheLaunchingThread) {
  const ProcessTrace t = Load(ThreadsScenario());
  const Summary s = Summarize(t, {});
  const SummaryRow* step = Find(s.nvtx, "step");
  ASSERT_NE(step, nullptr);
  EXPECT_EQ(step->stats.count(), 4u);
  // Each thread launched a kernel of 1000 + 200 i µs and a 4 µs copy inside its own "step".
  EXPECT_EQ(step->gpu_ns, (1000u + 1200u + 1400u + 1600u + 16u) * 1000u);
  const SummaryRow* copy = Find(s.nvtx, "copy");  // nested inside "step": only the copies
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->gpu_ns, 16'000u);
  // "phase" was opened on thread 100 and ended on 101: thread 101's kernel counts, 102's not.
  const SummaryRow* phase = Find(s.nvtx, "phase");
  ASSERT_NE(phase, nullptr);
  EXPECT_EQ(phase->gpu_ns, 100'000u);
}

TEST_F(SummaryTest, NvtxDomainsKeepRangesApart) {
  TraceBuilder b;
  b.AddRange("step", 0, 10, 1, NvtxKind::kPushPop, 0, "");
  b.AddRange("step", 20, 40, 1, NvtxKind::kPushPop, 0, "torch");
  b.SetEnd(50);
  const Summary s = Summarize(Load(b), {});
  ASSERT_EQ(s.nvtx.size(), 2u);
  EXPECT_EQ(s.nvtx[0].domain, "torch");  // 20 µs: first
  EXPECT_EQ(s.nvtx[1].domain, "");
  const std::string table = SummaryTable({s}, s, 120);
  EXPECT_NE(table.find("torch: step"), std::string::npos);
}

// A table shows its rows with the most time, and says what the others took: XLA names an NVTX
// range per compiled module and pass with its program id (94,000 rows for a JAX function
// compiled anew at each of 40 steps).
TEST_F(SummaryTest, TablesShowTheirFirstRowsAndSumTheOthers) {
  TraceBuilder b;
  b.AddRange("compile#program_id=1#", 0, 40, 1, NvtxKind::kPushPop, 0, "");
  b.AddRange("compile#program_id=2#", 50, 80, 1, NvtxKind::kPushPop, 0, "");
  b.AddRange("compile#program_id=3#", 90, 110, 1, NvtxKind::kPushPop, 0, "");
  b.AddRange("compile#program_id=4#", 120, 130, 1, NvtxKind::kPushPop, 0, "");
  b.SetEnd(200);
  const Summary s = Summarize(Load(b), {});
  ASSERT_EQ(s.nvtx.size(), 4u);
  const std::string cut = SummaryTable({s}, s, 120, 2);
  EXPECT_NE(cut.find("program_id=1"), std::string::npos) << cut;
  EXPECT_NE(cut.find("program_id=2"), std::string::npos) << cut;
  EXPECT_EQ(cut.find("program_id=3"), std::string::npos) << cut;
  EXPECT_NE(cut.find("(The other 2 rows took 30.0 µs in all; --rows 0 lists every row"),
            std::string::npos)
      << cut;
  const std::string all = SummaryTable({s}, s, 120, 0);
  EXPECT_NE(all.find("program_id=4"), std::string::npos) << all;
  EXPECT_EQ(all.find("The other"), std::string::npos) << all;
  EXPECT_EQ(SummaryTable({s}, s, 120, 4), all);
}

TEST_F(SummaryTest, EmptyTrace) {
  TraceBuilder b;
  b.SetEnd(100);
  const Summary s = Summarize(Load(b), {});
  EXPECT_EQ(s.trace_ns, 100'000u);
  EXPECT_EQ(s.events, 0u);
  EXPECT_TRUE(s.host.empty());
  EXPECT_TRUE(s.device.empty());
  EXPECT_EQ(s.gpu_busy_ns, 0u);
  const std::string table = SummaryTable({s}, s, 120);
  EXPECT_NE(table.find("No host-side activity was recorded."), std::string::npos);
  EXPECT_NE(table.find("No device-side activity was recorded."), std::string::npos);
  EXPECT_NE(SummaryJson({s}, s).find("\"host\": []"), std::string::npos);
}

TEST_F(SummaryTest, HostOnlyTrace) {
  const Summary s = Summarize(Load(HostOnlyScenario()), {});
  EXPECT_TRUE(s.device.empty());
  EXPECT_EQ(s.gpu_busy_ns, 0u);
  ASSERT_EQ(s.host.size(), 2u);  // cudaGetDeviceCount is noise
  EXPECT_EQ(s.host[0].name, "cudaMalloc");
  EXPECT_EQ(s.host[0].stats.total(), 120'000u);
  EXPECT_EQ(s.host_api_ns, 130'000u);
}

TEST_F(SummaryTest, SeveralProcessesPerProcessAndInTotal) {
  TraceBuilder a = Nrm2Scenario();
  TraceBuilder b = HostOnlyScenario();
  const ProcessTrace ta = a.RoundTrip(dir_.Path("a.pb"));
  const ProcessTrace tb = b.RoundTrip(dir_.Path("b.pb"));
  const std::vector<int64_t> offsets = TimeOffsets({ta, tb});
  EXPECT_EQ(offsets, (std::vector<int64_t>{0, 0}));  // same host and clock
  const std::vector<Summary> parts = {Summarize(ta, {}, offsets[0]), Summarize(tb, {}, offsets[1])};
  const Summary total = CombineSummaries(parts);
  EXPECT_EQ(total.processes, 2u);
  EXPECT_EQ(total.events, parts[0].events + parts[1].events);
  EXPECT_EQ(total.trace_ns, 5'033'000u);  // both start at the same instant
  // cudaMalloc only in b; cudaMemcpyAsync only in a; totals merge by name.
  EXPECT_EQ(Find(total.host, "cudaMalloc")->stats.count(), 2u);
  EXPECT_EQ(Find(total.host, "cudaMemcpyAsync")->stats.count(), 2u);
  // b's calls [5,105] [110,130] [140,150] fall inside a's [3,40.67]..[90,5030]: union grows by
  // [40.67,41] + [58.64,60] + [77.64,78] + [83.01,86] + [88.15,90] clipped to b's calls.
  EXPECT_GE(total.host_api_ns, parts[0].host_api_ns);
  EXPECT_LE(total.host_api_ns, parts[0].host_api_ns + parts[1].host_api_ns);
  EXPECT_EQ(total.gpu_busy_ns, parts[0].gpu_busy_ns);
  const std::string json = SummaryJson(parts, total);
  EXPECT_NE(json.find("\"processes\": ["), std::string::npos);
  EXPECT_NE(json.find("\"pid\": 8181"), std::string::npos);
  const std::string table = SummaryTable(parts, total, 120);
  EXPECT_NE(table.find("Process 4242 on testhost"), std::string::npos);
  EXPECT_NE(table.find("Total over 2 processes"), std::string::npos);
  const std::string csv = SummaryCsv(parts, total);
  EXPECT_NE(csv.find("host,all,cudaMalloc,"), std::string::npos);
}

TEST_F(SummaryTest, OtherHostsAreAlignedOnWallClock) {
  TraceBuilder a = HostOnlyScenario();
  TraceBuilder b = HostOnlyScenario();
  b.header().hostname = "otherhost";
  b.header().wall_clock_offset_ns = 1'000'000'000;  // its clock runs 1 s behind
  const ProcessTrace ta = a.Build();
  const ProcessTrace tb = b.Build();
  const std::vector<int64_t> offsets = TimeOffsets({ta, tb});
  EXPECT_EQ(offsets, (std::vector<int64_t>{0, 1'000'000'000}));
  const Summary total =
      CombineSummaries({Summarize(ta, {}, offsets[0]), Summarize(tb, {}, offsets[1])});
  EXPECT_EQ(total.trace_ns, 2 * 200'000u);  // disjoint windows
  EXPECT_EQ(total.host_api_ns, 2 * 130'000u);
}

TEST_F(SummaryTest, JsonShapeHasTheDocumentedFields) {
  const ProcessTrace t = Load(Nrm2Scenario());
  const Summary s = Summarize(t, {});
  const std::string json = SummaryJson({s}, s);
  for (const char* key :
       {"\"trace_ns\": 5033000", "\"host_api_ns\":", "\"gpu_busy_ns\":", "\"dropped_records\": 0",
        "\"host\": [", "\"device\": [", "\"nvtx\": [", "\"name\": \"cudaMemcpyAsync\"",
        "\"calls\": 2", "\"total_ns\": 4957640", "\"mean_ns\": 2478820", "\"min_ns\": 17640",
        "\"max_ns\": 4940000", "\"std_ns\":", "\"bytes\": 4", "\"copies\": ["}) {
    EXPECT_NE(json.find(key), std::string::npos) << key << "\n" << json;
  }
}

// Processes of one host whose work ran on the same GPU at the same time (two DDP ranks that
// forgot torch.cuda.set_device, as .carry/s17e/ddp_same_gpu.py ran on the H200) are named under
// the per-process table; the same GPU used one run after the other is no sharing.
TEST(SharedGpuTest, ProcessesSharingAGpuAtOnceAreNamed) {
  const std::string uuid("\x22\x2b\x92\xb5\x44\x3f\x05\xf8\xb6\x63\xf5\xf7\xc1\x7b\x5e\x63", 16);
  const auto process = [&](uint32_t pid, double start_us) {
    TraceBuilder b(pid);
    b.header().start_time_ns = Us(start_us - 5);  // each recording starts just before its work
    b.AddContext(1, 7);
    b.AddStream(7, StreamType::kNull);
    b.records().devices.push_back({.id = 0, .name = "H200", .uuid = uuid});
    b.Launch("step", start_us, start_us + 5, start_us + 6, start_us + 50, 7);
    b.SetEnd(start_us + 100);
    Summary s = Summarize(b.Build(), {});
    s.hostname = "node1";
    return s;
  };
  const Summary a = process(10, 10);
  EXPECT_EQ(a.gpus, std::vector<std::string>{"GPU-222b92b5-443f-05f8-b663-f5f7c17b5e63"});
  const Summary together = process(11, 40);  // overlaps a's recording
  const Summary later = process(12, 5000);   // after it
  const std::string shared = SummaryTable({a, together}, a, 120);
  EXPECT_NE(shared.find("Processes 10 and 11 on node1 ran work on the same GPU "
                        "(GPU-222b92b5-443f-05f8-b663-f5f7c17b5e63)"),
            std::string::npos)
      << shared;
  const std::string one_after_the_other = SummaryTable({a, later}, a, 120);
  EXPECT_EQ(one_after_the_other.find("ran work on the same GPU"), std::string::npos)
      << one_after_the_other;
}

}  // namespace
}  // namespace libprof::analysis::testing
