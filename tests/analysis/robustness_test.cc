// Proves bad input never crashes the analyses: odd records (end before start, no timestamps, no
// correlation id, unknown string ids) and randomly damaged files either load and analyse or fail
// with a message (the streamed summary failing alike).
#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "tests/analysis/scenarios.h"
#include "analysis/rules/findings.h"
#include "analysis/reports/findings_report.h"
#include "analysis/metrics/summary.h"
#include "analysis/reports/summary_report.h"
#include "analysis/reports/trace_listing.h"

namespace libprof::analysis::testing {
namespace {

void AnalyseEverything(const ProcessTrace& t) {
  const Summary s = Summarize(t, {});
  EXPECT_LE(s.host_api_ns, s.trace_ns);
  EXPECT_LE(s.gpu_busy_ns, s.trace_ns);
  SummaryTable({s}, s, 80);
  SummaryJson({s}, s);
  SummaryCsv({s}, s);
  const std::vector<Finding> findings = FindFindings(t, {});
  for (const Finding& f : findings) EXPECT_LE(f.blocked_ns, f.host_duration_ns);
  FindingsReportContext context;
  FindingsTable(findings, context);
  FindingsJson(findings, context);
  const auto rows = TraceRows(t, true);
  TraceTable(rows, 80);
  TraceJson(rows);
}

TEST(RobustnessTest, OddRecordsDoNotCrash) {
  TraceBuilder b;
  b.Api("cudaMemcpy", 50, 40, 1);   // ends before it starts
  b.Api("cudaMalloc", 0, 0, 1, 0);  // no timestamps
  b.records().api_calls.back().start_ns = 0;
  b.records().api_calls.back().end_ns = 0;
  b.records().api_calls.push_back(ApiCall{.name_id = 9999, .start_ns = Us(1), .end_ns = Us(2)});
  const uint64_t c = b.Api("cudaMemcpyAsync", 10, 20, 1);
  b.AddMemcpy(CopyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPageable, 8, 30, 25, c, 99, true);
  b.AddKernel("", 5, 6, 0, 0);       // no name, no correlation id
  b.AddKernel("_Z1kv", 5, 6, c, 4);  // shares the copy's correlation id
  b.AddRange("r", 10, 5, 1);         // NVTX range ending before it starts
  b.AddRange("se", 1, 3, 7, NvtxKind::kStartEnd).end_thread_id = 0;
  b.AddSync(SyncType::kEventSynchronize, 1, 2, 424242, kNoStream, 5);  // unknown event and call
  b.AddStream(4, StreamType::kUnknown);
  b.SetEnd(100);
  AnalyseEverything(b.Build());
  TempDir dir;
  AnalyseEverything(b.RoundTrip(dir.Path("odd.pb")));
}

TEST(RobustnessTest, DamagedFilesLoadOrFailCleanly) {
  TempDir dir;
  StreamsScenario().Write(dir.Path("good.pb"), 256);  // many small chunks
  std::ifstream in(dir.Path("good.pb"), std::ios::binary);
  const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::mt19937 random(12345);
  int loaded = 0, failed = 0;
  for (int round = 0; round < 200; ++round) {
    std::string bytes = good;
    const int flips = 1 + round % 4;
    for (int i = 0; i < flips; ++i) bytes[random() % bytes.size()] = static_cast<char>(random());
    if (round % 5 == 0) bytes.resize(random() % bytes.size());
    const std::string path = dir.Path("damaged.pb");
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), bytes.size());
    std::vector<std::string> warnings;
    auto traces = LoadTraceFile(path, &warnings);
    // The streamed summary reads the file its own way (a first pass over NVTX ranges only):
    // it must fail exactly when loading does, with the same message.
    std::vector<std::string> streamed_warnings;
    auto streamed = SummarizeFiles({path}, {}, {}, &streamed_warnings);
    EXPECT_EQ(streamed.has_value(), traces.has_value()) << "round " << round;
    if (!traces) {
      EXPECT_FALSE(traces.error().empty());
      EXPECT_EQ(traces.error().find('\n'), std::string::npos);
      if (!streamed) {
        EXPECT_EQ(streamed.error(), traces.error());
      }
      ++failed;
      continue;
    }
    ++loaded;
    EXPECT_EQ(streamed_warnings, warnings);
    for (const ProcessTrace& t : *traces) AnalyseEverything(t);
  }
  EXPECT_GT(loaded + failed, 0);
}

}  // namespace
}  // namespace libprof::analysis::testing
