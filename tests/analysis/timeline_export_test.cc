// Proves that `profview export` writes a Chrome Trace Event Format timeline that parses, is well
// formed for ui.perfetto.dev (tests/analysis/chrome_trace_check.h) on every synthetic scenario and
// every recorded fixture, and carries the right events: hand-checked times, names, args, flows,
// findings, tracks, escaping, filters and common time origins.
#include "analysis/reports/timeline_export.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <streambuf>

#include "tests/analysis/chrome_trace_check.h"
#include "tests/analysis/scenarios.h"
#include "analysis/model/filters.h"
#include "analysis/model/trace_index.h"

namespace libprof::analysis::testing {
namespace {

using Json = nlohmann::json;

std::string Lines(const std::vector<std::string>& problems) {
  std::string out;
  for (const std::string& p : problems) out += p + "\n";
  return out;
}

// Exports, parses and checks the structure; a parse failure or a structural problem fails the
// test that called it.
Json Export(const std::vector<ProcessTrace>& traces, const ExportOptions& options = {}) {
  std::ostringstream out;
  auto stats = ExportTimeline(traces, options, &out);
  EXPECT_TRUE(stats.has_value()) << stats.error();
  Json doc = Json::parse(out.str(), nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(doc.is_discarded()) << "not valid JSON:\n" << out.str().substr(0, 2000);
  if (doc.is_discarded()) return Json::object();
  const std::vector<std::string> problems = CheckChromeTrace(doc);
  EXPECT_TRUE(problems.empty()) << Lines(problems);
  EXPECT_EQ(stats.value_or(ExportStats{}).events, doc["traceEvents"].size());
  return doc;
}

Json Export(const TraceBuilder& b, const ExportOptions& options = {}) {
  return Export(std::vector<ProcessTrace>{b.Build()}, options);
}

std::vector<Json> Events(const Json& doc, const std::string& ph, const std::string& cat = "") {
  std::vector<Json> out;
  for (const Json& e : doc["traceEvents"]) {
    if (e["ph"] == ph && (cat.empty() || e.value("cat", "") == cat)) out.push_back(e);
  }
  return out;
}

std::vector<Json> Named(const Json& doc, const std::string& ph, const std::string& name) {
  std::vector<Json> out;
  for (const Json& e : doc["traceEvents"]) {
    if (e["ph"] == ph && e["name"] == name) out.push_back(e);
  }
  return out;
}

// The name given by a thread_name metadata event to (pid, tid).
std::map<std::pair<int64_t, int64_t>, std::string> TrackNames(const Json& doc) {
  std::map<std::pair<int64_t, int64_t>, std::string> names;
  for (const Json& e : Named(doc, "M", "thread_name")) {
    names[{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}] = e["args"]["name"];
  }
  return names;
}

TEST(TimelineExportTest, Nrm2HasHandCheckedEvents) {
  const Json doc = Export(Nrm2Scenario());
  EXPECT_EQ(doc["displayTimeUnit"], "ns");
  const auto process = Named(doc, "M", "process_name");
  ASSERT_EQ(process.size(), 1u);
  EXPECT_EQ(process[0]["pid"], 4242);
  EXPECT_EQ(process[0]["args"]["name"], "synthetic");

  // The first nrm2 kernel: 80 µs to 5010 µs after the recording start, on stream 7.
  const auto kernels = Events(doc, "X", "kernel");
  ASSERT_EQ(kernels.size(), 2u);
  const Json& k = kernels[0];
  EXPECT_EQ(k["name"], "nrm2_kernel<…>(…)");  // abbreviated as in findings (kProseNameChars)
  EXPECT_EQ(Nanos(k["ts"]), 80'000);
  EXPECT_EQ(Nanos(k["dur"]), 4'930'000);
  EXPECT_EQ(k["args"]["grid"], "(64,1,1)");
  EXPECT_EQ(k["args"]["block"], "(128,1,1)");
  EXPECT_EQ(k["args"]["registers_per_thread"], 32);
  EXPECT_EQ(k["args"]["static_shared_memory_bytes"], 1024);
  EXPECT_EQ(k["args"]["kernel"],
            "nrm2_kernel<float, float, float, 1, 0, 128>(cublasNrm2Params<int, float, float>)");
  EXPECT_EQ(k["args"]["launched_by"], "cudaLaunchKernel");
  const std::pair<int64_t, int64_t> stream_track{4242, k["tid"].get<int64_t>()};
  EXPECT_EQ(TrackNames(doc)[stream_track], "GPU 0 stream 7 (legacy-default)");

  // The 4-byte download: 1.91 µs, so 4 B / 1910 ns = 0.00209 GB/s.
  const auto down = Named(doc, "X", "[copy device to pageable memory]");
  ASSERT_EQ(down.size(), 1u);
  EXPECT_EQ(down[0]["args"]["bytes"], 4);
  EXPECT_NEAR(down[0]["args"]["gb_per_s"].get<double>(), 4.0 / 1910.0, 1e-8);
  EXPECT_EQ(down[0]["args"]["src_kind"], "device");
  EXPECT_EQ(down[0]["args"]["dst_kind"], "pageable");
  EXPECT_EQ(Named(doc, "X", "[copy pageable to device memory]").size(), 1u);

  // Every device operation has its launch arrow from an API call on thread 1.
  const auto launches = Events(doc, "s", "launch");
  EXPECT_EQ(launches.size(), 4u);
  for (const Json& s : launches) EXPECT_EQ(s["tid"], 1);

  // Hidden by default, as in the summary: capture-info queries, cudaGetLastError, nested calls.
  EXPECT_TRUE(Named(doc, "X", "cudaGetLastError").empty());
  EXPECT_TRUE(Named(doc, "X", "cuMemcpyDtoHAsync_v2").empty());
  EXPECT_EQ(Named(doc, "X", "cudaLaunchKernel").size(), 2u);
}

TEST(TimelineExportTest, Nrm2BlockedCopyIsMarked) {
  const Json doc = Export(Nrm2Scenario());
  const auto copies = Named(doc, "X", "cudaMemcpyAsync");
  ASSERT_EQ(copies.size(), 2u);
  const Json& call = copies[1];  // the download, entered at 90 µs
  EXPECT_EQ(Nanos(call["ts"]), 90'000);
  EXPECT_EQ(call["cat"], "cuda_runtime,finding");
  // Entered at 90 µs; the second kernel it had to follow ended at 5020 µs: 4930 µs waiting.
  EXPECT_EQ(call["args"]["blocked_ns"], 4'930'000);
  EXPECT_NE(call["args"]["waited_for"].get<std::string>().find("corr 9"), std::string::npos);
  EXPECT_EQ(call["args"]["findings"], "blocked-on-prior-work, pageable-async-memcpy");
  EXPECT_TRUE(call["args"].contains("blocked-on-prior-work"));

  bool instant = false;
  for (const Json& i : Events(doc, "i", "finding")) {
    instant |= i["name"].get<std::string>().starts_with(
        "cudaMemcpyAsync blocked 4.93 ms waiting for nrm2_kernel");
  }
  EXPECT_TRUE(instant);
  // One wait arrow per blamed kernel, from the kernel's start to where it ended inside the call.
  const auto waits = Events(doc, "f", "wait");
  ASSERT_EQ(waits.size(), 2u);
  std::set<int64_t> ends = {Nanos(waits[0]["ts"]), Nanos(waits[1]["ts"])};
  EXPECT_EQ(ends, (std::set<int64_t>{5'010'000, 5'020'000}));
  const Json stream_tid = Events(doc, "X", "kernel").front()["tid"];
  for (const Json& s : Events(doc, "s", "wait")) EXPECT_EQ(s["tid"], stream_tid);
}

// Proves the recorded call stacks reach the timeline: each copy cuBLAS made carries its call
// site (the cuBLAS entry point and the program's function) and its whole stack, innermost first;
// a call without a stack carries neither.
TEST(TimelineExportTest, CallsCarryTheirCallSites) {
  const Json doc = Export(CallSitesScenario());
  const auto copies = Named(doc, "X", "cudaMemcpyAsync");
  ASSERT_EQ(copies.size(), 3u);
  for (const Json& copy : copies) {
    EXPECT_EQ(copy["args"]["call_site"], "cublasSnrm2_v2 (libcublas.so.13) ← NormalizeLoop (app)");
    const std::string stack = copy["args"]["call_stack"];
    EXPECT_TRUE(stack.starts_with("cudaMemcpyAsync (libcublas.so.13)\n")) << stack;
    EXPECT_NE(stack.find("\nmain (app)\n"), std::string::npos) << stack;
  }
  for (const Json& launch : Named(doc, "X", "cudaLaunchKernel")) {
    EXPECT_FALSE(launch["args"].contains("call_site"));
    EXPECT_FALSE(launch["args"].contains("call_stack"));
  }
}

TEST(TimelineExportTest, RawShowsNestedCallsInsideTheirRuntimeCall) {
  const Json doc = Export(Nrm2Scenario(), ExportOptions{.raw = true, .findings = {}});
  const auto nested = Named(doc, "X", "cuMemcpyDtoHAsync_v2");
  ASSERT_EQ(nested.size(), 1u);
  EXPECT_EQ(nested[0]["cat"], "cuda_driver");
  EXPECT_EQ(nested[0]["args"]["nested"], true);
  EXPECT_EQ(Named(doc, "X", "cudaGetLastError").size(), 4u);
  // The structure check has already proved that it nests inside cudaMemcpyAsync's slice; the
  // launch arrow still leaves from the runtime call only.
  EXPECT_EQ(Events(doc, "s", "launch").size(), 4u);
}

TEST(TimelineExportTest, StreamsAreNamedWithTheirKind) {
  const Json doc = Export(StreamsScenario());
  std::set<std::string> names;
  for (const auto& [track, name] : TrackNames(doc)) names.insert(name);
  for (const char* expected :
       {"GPU 0 stream 7 (legacy-default)", "GPU 0 stream 13 (blocking)",
        "GPU 0 stream 14 (blocking)", "GPU 0 stream 15 (non-blocking)",
        "GPU 0 stream 20 (per-thread-default)", "thread 1"}) {
    EXPECT_EQ(names.count(expected), 1u) << expected;
  }
  // The graph launch issued three kernel nodes: three arrows from cudaGraphLaunch.
  const auto graph_calls = Named(doc, "X", "cudaGraphLaunch");
  ASSERT_EQ(graph_calls.size(), 1u);
  int from_graph_launch = 0;
  for (const Json& s : Events(doc, "s", "launch")) {
    from_graph_launch += Nanos(s["ts"]) == Nanos(graph_calls[0]["ts"]);
  }
  EXPECT_EQ(from_graph_launch, 3);
  // The memset and the synchronous calls with findings.
  const auto memsets = Events(doc, "X", "memset");
  ASSERT_EQ(memsets.size(), 1u);
  EXPECT_EQ(memsets[0]["name"], "[set device memory]");
  EXPECT_EQ(memsets[0]["args"]["bytes"], 1 << 20);
  const auto syncs = Named(doc, "X", "cudaStreamSynchronize");
  ASSERT_EQ(syncs.size(), 1u);
  EXPECT_EQ(syncs[0]["args"]["findings"], "sync-api");
}

TEST(TimelineExportTest, ThreadsKeepTheirRangesAndCrossThreadRangesAreAsync) {
  const Json doc = Export(ThreadsScenario());
  // Push/pop ranges are slices on their own thread: "step" and "copy" on each of 4 threads.
  const auto steps = Named(doc, "X", "step");
  ASSERT_EQ(steps.size(), 4u);
  std::set<int64_t> tids;
  for (const Json& s : steps) tids.insert(s["tid"].get<int64_t>());
  EXPECT_EQ(tids, (std::set<int64_t>{100, 101, 102, 103}));
  EXPECT_EQ(Named(doc, "X", "copy").size(), 4u);
  // The start/end range "phase" begins on thread 100 and ends on thread 101.
  const auto begin = Named(doc, "b", "phase");
  const auto end = Named(doc, "e", "phase");
  ASSERT_EQ(begin.size(), 1u);
  ASSERT_EQ(end.size(), 1u);
  EXPECT_EQ(begin[0]["tid"], 100);
  EXPECT_EQ(end[0]["tid"], 101);
  EXPECT_EQ(Nanos(begin[0]["ts"]), 1'800'000);
  EXPECT_EQ(Nanos(end[0]["ts"]), 2'600'000);
  EXPECT_EQ(begin[0]["args"]["ended_on_thread"], 101);
}

TEST(TimelineExportTest, GpuFindingsHaveTheirOwnTracks) {
  const Json doc = Export(IdleScenario());
  std::vector<Json> gaps;
  const auto names = TrackNames(doc);
  for (const Json& e : Events(doc, "X", "finding")) {
    if (names.at({e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}) ==
        "GPU 0 findings: gpu-idle-gaps") {
      gaps.push_back(e);
    }
  }
  // The launch loop's last kernel ends at 10100.5 µs, the long kernel starts at 610100 µs.
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(Nanos(gaps[0]["ts"]), 10'100'500);
  EXPECT_EQ(Nanos(gaps[0]["dur"]), 610'100'000 - 10'100'500);
}

// A range that ends inside a call (the two clocks disagree by a little) and two kernels that
// overlap on one stream: the second of each goes to an extra track, where it nests.
TEST(TimelineExportTest, PartlyOverlappingSlicesGetAnExtraTrack) {
  TraceBuilder b(88);
  b.AddStream(7, StreamType::kDefault);
  b.AddRange("phase", 0, 10.5, 1);
  b.Api("cudaMemcpyAsync", 10, 20, 1);
  const uint64_t k1 = b.Api("cudaLaunchKernel", 30, 31, 1);
  const uint64_t k2 = b.Api("cudaLaunchKernel", 32, 33, 1);
  b.AddKernel("_Z1av", 40, 60, k1, 7);
  b.AddKernel("_Z1bv", 50, 70, k2, 7);
  b.SetEnd(100);
  const Json doc = Export(b);  // the structure check proves the nesting on every track
  std::set<std::string> names;
  for (const auto& [track, name] : TrackNames(doc)) names.insert(name);
  EXPECT_EQ(names, (std::set<std::string>{"thread 1", "thread 1 (overlapping 1)",
                                          "GPU 0 stream 7 (blocking)",
                                          "GPU 0 stream 7 (blocking) (overlapping 1)"}));
  const auto call = Named(doc, "X", "cudaMemcpyAsync");
  ASSERT_EQ(call.size(), 1u);
  EXPECT_NE(call[0]["tid"], 1);
  EXPECT_EQ(Named(doc, "X", "phase").at(0)["tid"], 1);
  EXPECT_EQ(Events(doc, "s", "launch").size(), 2u);
}

TEST(TimelineExportTest, MigrationsAreCountersOfBytesMovedSinceTheStart) {
  const ProcessTrace trace = UnifiedMemoryScenario().Build();
  std::map<std::string, uint64_t> moved;  // by direction, from the records themselves
  for (const UnifiedMemoryCounter& c : trace.records.unified_memory_counters) {
    if (c.counter_kind == UvmCounterKind::kBytesHtoD) moved["host → device"] += c.value;
    if (c.counter_kind == UvmCounterKind::kBytesDtoH) moved["device → host"] += c.value;
  }
  ASSERT_EQ(moved.size(), 2u);
  const Json doc = Export({trace});
  for (const auto& [direction, bytes] : moved) {
    const std::vector<Json> steps = Named(doc, "C", "unified memory migrated " + direction);
    ASSERT_FALSE(steps.empty()) << direction;
    uint64_t last = 0;
    double last_ts = -1;
    for (const Json& e : steps) {
      const uint64_t value = e["args"]["bytes"].get<uint64_t>();
      EXPECT_GT(value, last) << direction << ": a step adds bytes";
      EXPECT_GT(e["ts"].get<double>(), last_ts) << direction << ": steps in time order";
      last = value;
      last_ts = e["ts"].get<double>();
    }
    EXPECT_EQ(last, bytes) << direction;
  }
  // A trace without unified memory gets no such track.
  for (const Json& e : Events(Export(Nrm2Scenario()), "C")) {
    EXPECT_EQ(e["name"].get<std::string>().find("unified memory"), std::string::npos);
  }
}

TEST(TimelineExportTest, EmptyAndHostOnlyTracesExport) {
  TraceBuilder empty(9191);
  empty.SetEnd(100);
  const Json none = Export(empty);
  EXPECT_EQ(Named(none, "M", "process_name").size(), 1u);
  EXPECT_TRUE(Events(none, "X").empty());
  const Json host = Export(HostOnlyScenario());
  EXPECT_EQ(Events(host, "X").size(), 3u);  // cudaGetDeviceCount is noise
  EXPECT_TRUE(Events(host, "s").empty());
}

// Names with quotes, backslashes, control characters, multi-byte UTF-8 and an invalid byte.
TEST(TimelineExportTest, NamesAreEscaped) {
  const std::string nasty = "say \"hi\" \\ back\x01\x1f\ttab\nline é 🚀 ∑";
  TraceBuilder b(77);
  b.header().hostname = "host \"q\"";
  b.header().command_line = {"./app\\", "--name=\"x\""};
  b.AddRange(nasty, 1, 50, 1);
  b.AddRange("bad \xff byte", 2, 3, 1, NvtxKind::kMark);
  b.Launch(nasty, 5, 10, 12, 20, 7);
  b.SetEnd(60);
  const Json doc = Export(b);
  const auto ranges = Events(doc, "X", "nvtx");
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0]["name"], nasty);
  const auto marks = Events(doc, "i", "nvtx");
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks[0]["name"], "bad \uFFFD byte");
  const auto kernels = Events(doc, "X", "kernel");
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0]["args"]["mangled_name"], nasty);
  const auto labels = Named(doc, "M", "process_labels");
  ASSERT_EQ(labels.size(), 1u);
  EXPECT_NE(labels[0]["args"]["labels"].get<std::string>().find("host host \"q\""),
            std::string::npos);
}

std::vector<ProcessTrace> Filtered(std::vector<ProcessTrace> traces, const FilterOptions& f) {
  auto out = ApplyFilters(std::move(traces), f);
  EXPECT_TRUE(out.has_value()) << out.error();
  return out.value_or(std::vector<ProcessTrace>{});
}

TEST(TimelineExportTest, TimeWindowIsRespected) {
  FilterOptions window;
  window.from_ns = 59'000;
  window.to_ns = 89'000;
  const Json doc = Export(Filtered({Nrm2Scenario().Build()}, window));
  const auto slices = Events(doc, "X");
  ASSERT_FALSE(slices.empty());
  for (const Json& e : slices) {
    EXPECT_GE(Nanos(e["ts"]), 59'000) << e.dump();
    EXPECT_LT(Nanos(e["ts"]), 89'000) << e.dump();
  }
  // The two launches and their kernels are in the window; the copies are not.
  EXPECT_EQ(Named(doc, "X", "cudaLaunchKernel").size(), 2u);
  EXPECT_TRUE(Named(doc, "X", "cudaMemcpyAsync").empty());
}

TEST(TimelineExportTest, ThreadAndNvtxFiltersAreRespected) {
  FilterOptions tid;
  tid.tids = {101};
  const Json one = Export(Filtered({ThreadsScenario().Build()}, tid));
  for (const Json& e : Events(one, "X")) {
    const std::string cat = e.value("cat", "");
    if (cat == "cuda_runtime" || cat == "nvtx") {
      EXPECT_EQ(e["tid"], 101) << e.dump();
    }
  }
  EXPECT_EQ(Events(one, "X", "kernel").size(), 2u);  // its two launches

  FilterOptions nvtx;
  nvtx.nvtx = {"copy"};
  const Json copy = Export(Filtered({ThreadsScenario().Build()}, nvtx));
  // Only the copy calls started inside "copy" ranges, and their copies.
  EXPECT_EQ(Named(copy, "X", "cudaMemcpyAsync").size(), 4u);
  EXPECT_TRUE(Named(copy, "X", "cudaLaunchKernel").empty());
  EXPECT_EQ(Events(copy, "X", "memcpy").size(), 4u);
}

TEST(TimelineExportTest, ProcessesShareOneOrigin) {
  // Same host and clock: the second process started 1 ms later, so its events are 1000 µs later.
  TraceBuilder second = Nrm2Scenario();
  second.header().pid = 4343;
  second.header().start_time_ns += 1'000'000;
  ProcessTrace later = second.Build();
  for (ApiCall& c : later.records.api_calls) c.start_ns += 1'000'000, c.end_ns += 1'000'000;
  for (Kernel& k : later.records.kernels) k.start_ns += 1'000'000, k.end_ns += 1'000'000;
  for (Memcpy& m : later.records.memcpys) m.start_ns += 1'000'000, m.end_ns += 1'000'000;
  const Json doc = Export({Nrm2Scenario().Build(), later});
  std::map<int64_t, int64_t> first_kernel;
  for (const Json& k : Events(doc, "X", "kernel")) {
    first_kernel.try_emplace(k["pid"].get<int64_t>(), Nanos(k["ts"]));
  }
  EXPECT_EQ(first_kernel[4242], 80'000);
  EXPECT_EQ(first_kernel[4343], 1'080'000);
  EXPECT_EQ(Named(doc, "M", "process_name").size(), 2u);
}

TEST(TimelineExportTest, HostsAreAlignedOnWallClock) {
  // Two hosts: B's monotonic clock reads 5 s less than A's at the same wall-clock instant.
  TraceBuilder a = Nrm2Scenario();
  a.header().wall_clock_offset_ns = 1'700'000'000'000'000'000;
  TraceBuilder b = Nrm2Scenario();
  b.header().pid = 4343;
  b.header().hostname = "otherhost";
  b.header().wall_clock_offset_ns = 1'700'000'000'000'000'000 + 5'000'000'000;
  const Json doc = Export({a.Build(), b.Build()});
  std::map<int64_t, int64_t> first_kernel;
  for (const Json& k : Events(doc, "X", "kernel")) {
    first_kernel.try_emplace(k["pid"].get<int64_t>(), Nanos(k["ts"]));
  }
  EXPECT_EQ(first_kernel[4242], 80'000);
  EXPECT_EQ(first_kernel[4343], 5'000'080'000);
}

TEST(TimelineExportTest, SamePidTwiceGetsTwoProcesses) {
  const Json doc = Export({Nrm2Scenario().Build(), Nrm2Scenario().Build()});
  const auto names = Named(doc, "M", "process_name");
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0]["pid"], 4242);
  EXPECT_NE(names[1]["pid"], 4242);
  EXPECT_GE(names[1]["pid"].get<int64_t>(), 1 << 22);  // beyond any Linux pid
  EXPECT_EQ(names[1]["args"]["name"], "synthetic (pid 4242)");
  EXPECT_EQ(Events(doc, "s", "launch").size(), 8u);  // flow ids unique across processes
}

// A stream buffer that accepts `limit` characters, then fails.
class FailingBuffer : public std::streambuf {
 public:
  explicit FailingBuffer(size_t limit) : limit_(limit) {}

 protected:
  int_type overflow(int_type c) override {
    if (written_ >= limit_) return traits_type::eof();
    ++written_;
    return c;
  }

 private:
  size_t limit_;
  size_t written_ = 0;
};

TEST(TimelineExportTest, WriteFailureIsAnError) {
  FailingBuffer buffer(500);
  std::ostream out(&buffer);
  auto stats = ExportTimeline({Nrm2Scenario().Build()}, {}, &out);
  ASSERT_FALSE(stats.has_value());
  EXPECT_EQ(stats.error(), "writing the timeline failed");
}

// The traces recorded on a GPU (samples/traces): well formed, one slice per device operation,
// one launch arrow per operation whose launching call is shown.
TEST(TimelineExportTest, RecordedFixturesExportWellFormed) {
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(LIBPROF_SAMPLE_TRACES)) {
    if (entry.path().extension() != ".pb") continue;
    SCOPED_TRACE(entry.path().string());
    ++files;
    std::vector<std::string> warnings;
    auto traces = LoadTraceFile(entry.path().string(), &warnings);
    ASSERT_TRUE(traces.has_value()) << traces.error();
    const Json doc = Export(*traces);
    const TraceIndex index(traces->front());
    size_t device_slices = 0;
    for (const char* cat : {"kernel", "memcpy", "memset", "graph"}) {
      device_slices += Events(doc, "X", cat).size();
    }
    EXPECT_EQ(device_slices, index.device_ops().size());
    EXPECT_LE(Events(doc, "s", "launch").size(), index.device_ops().size());
    EXPECT_GT(Events(doc, "s", "launch").size(), 0u);
  }
  EXPECT_GE(files, 10u);
}

}  // namespace
}  // namespace libprof::analysis::testing
