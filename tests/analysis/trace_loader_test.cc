// Proves traces survive the real write/read path, a cut file is read up to its last complete
// chunk with a warning, and missing, foreign or corrupt files are clear errors.
#include "analysis/model/trace_loader.h"

#include <gtest/gtest.h>

#include <fstream>

#include "analysis/metrics/summary.h"
#include "analysis/model/trace_windows.h"
#include "tests/analysis/scenarios.h"

namespace libprof::analysis::testing {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST(TraceLoaderTest, RoundTripKeepsEveryRecord) {
  TempDir dir;
  const TraceBuilder b = StreamsScenario();
  const ProcessTrace memory = b.Build();
  const ProcessTrace file = b.RoundTrip(dir.Path("streams.pb"));
  EXPECT_EQ(file.header, memory.header);
  EXPECT_EQ(file.records.api_calls, memory.records.api_calls);
  EXPECT_EQ(file.records.kernels, memory.records.kernels);
  EXPECT_EQ(file.records.memcpys, memory.records.memcpys);
  EXPECT_EQ(file.records.memsets, memory.records.memsets);
  EXPECT_EQ(file.records.synchronizations, memory.records.synchronizations);
  EXPECT_EQ(file.records.cuda_events, memory.records.cuda_events);
  EXPECT_EQ(file.records.streams, memory.records.streams);
  EXPECT_EQ(file.records.contexts, memory.records.contexts);
  EXPECT_EQ(file.windows, memory.windows);
  EXPECT_EQ(file.origin_ns, kT0);
  for (const ApiCall& c : file.records.api_calls) {
    EXPECT_FALSE(file.Str(c.name_id).empty());
  }
  EXPECT_FALSE(file.truncated);
}

TEST(TraceLoaderTest, WindowRunsFromHeaderStartToRunEnd) {
  TraceBuilder b;
  b.Api("cudaMalloc", 10, 20);
  b.SetEnd(50);
  const ProcessTrace t = b.Build();
  ASSERT_EQ(t.windows.size(), 1u);
  EXPECT_EQ(t.windows[0], (Interval{Us(0), Us(50)}));
  EXPECT_EQ(t.window_ns(), 50'000u);
  // Without RunEnd (a crashed process), the last record ends the window.
  TraceBuilder c;
  c.Api("cudaMalloc", 10, 20);
  EXPECT_EQ(c.Build().windows[0], (Interval{Us(0), Us(20)}));
}

TEST(TraceLoaderTest, TruncatedFileLoadsCompleteChunksWithWarning) {
  TempDir dir;
  const TraceBuilder b = IdleScenario();
  b.Write(dir.Path("full.pb"), 4 << 10);  // small chunks: several of them
  const std::string bytes = ReadAll(dir.Path("full.pb"));
  WriteAll(dir.Path("cut.pb"), bytes.substr(0, bytes.size() - 50));
  std::vector<std::string> warnings;
  auto loaded = LoadTraceFile(dir.Path("cut.pb"), &warnings);
  ASSERT_TRUE(loaded.has_value()) << loaded.error();
  ASSERT_EQ(loaded->size(), 1u);
  const ProcessTrace& t = loaded->front();
  EXPECT_TRUE(t.truncated);
  EXPECT_GT(t.records.RecordCount(), 0u);
  EXPECT_LT(t.records.RecordCount(), b.Build().records.RecordCount());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("ends inside a chunk"), std::string::npos);
  EXPECT_NE(warnings[0].find("cut.pb"), std::string::npos);
}

TEST(TraceLoaderTest, BadFilesAreOneSentenceErrors) {
  TempDir dir;
  std::vector<std::string> warnings;
  auto missing = LoadTraceFile(dir.Path("nope.pb"), &warnings);
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().find("nope.pb"), std::string::npos);
  EXPECT_EQ(missing.error().find('\n'), std::string::npos);

  WriteAll(dir.Path("text.pb"), "this is not a trace at all\n");
  auto foreign = LoadTraceFile(dir.Path("text.pb"), &warnings);
  ASSERT_FALSE(foreign.has_value());
  EXPECT_NE(foreign.error().find("text.pb"), std::string::npos);

  // Garbage over a chunk in the middle: the chunk no longer parses.
  IdleScenario().Write(dir.Path("good.pb"), 4 << 10);
  std::string bytes = ReadAll(dir.Path("good.pb"));
  for (size_t i = bytes.size() / 2; i < bytes.size() / 2 + 64; ++i) bytes[i] = '\x07';
  WriteAll(dir.Path("bad.pb"), bytes);
  auto corrupt = LoadTraceFile(dir.Path("bad.pb"), &warnings);
  ASSERT_FALSE(corrupt.has_value());
  EXPECT_NE(corrupt.error().find("bad.pb"), std::string::npos);
  EXPECT_EQ(corrupt.error().find('\n'), std::string::npos);
}

TEST(TraceLoaderTest, DroppedRecordsAreReported) {
  TempDir dir;
  TraceBuilder b;
  b.Api("cudaMalloc", 1, 2);
  b.records().drops.push_back({.source = "cupti", .count = 12, .at_ns = Us(1)});
  b.SetEnd(5);
  b.Write(dir.Path("drops.pb"));
  std::vector<std::string> warnings;
  auto loaded = LoadTraceFile(dir.Path("drops.pb"), &warnings);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(DroppedRecords(loaded->front().records), 12u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("12 record(s) were dropped"), std::string::npos);
}

// A whole file whose recording has no RunEnd (os._exit, SIGKILL): every reader says what was
// lost, in the flush intervals of the trace's own header; a cut file says only that it is cut.
TEST(TraceLoaderTest, ARecordingWithNoEndIsReportedByEveryReader) {
  TempDir dir;
  TraceBuilder b = IdleScenario();
  b.header().settings["LIBPROF_FLUSH_INTERVAL_MS"] = "250";
  b.SetEnd(0);  // (no RunEnd)
  b.Write(dir.Path("no_end.pb"), 4 << 10);
  std::vector<std::string> loaded_warnings, streamed_warnings;
  ASSERT_TRUE(LoadTraceFile(dir.Path("no_end.pb"), &loaded_warnings).has_value());
  ASSERT_EQ(loaded_warnings.size(), 1u);
  EXPECT_NE(loaded_warnings[0].find("pid " + std::to_string(b.header().pid) +
                                    "'s recording has no end record"),
            std::string::npos)
      << loaded_warnings[0];
  EXPECT_NE(loaded_warnings[0].find("its last 500.0 ms (two flush intervals)"), std::string::npos)
      << loaded_warnings[0];
  ASSERT_TRUE(SummarizeFiles({dir.Path("no_end.pb")}, {}, {}, &streamed_warnings).has_value());
  EXPECT_EQ(streamed_warnings, loaded_warnings);
  auto windowed = ReadInWindows(dir.Path("no_end.pb"), WindowLimits{}, [](const ProcessTrace&) {});
  ASSERT_TRUE(windowed.has_value());
  EXPECT_EQ(windowed->warnings, loaded_warnings);

  // With its end, nothing to say.
  b.SetEnd(700'000);
  b.Write(dir.Path("ended.pb"), 4 << 10);
  std::vector<std::string> ended_warnings;
  ASSERT_TRUE(LoadTraceFile(dir.Path("ended.pb"), &ended_warnings).has_value());
  EXPECT_TRUE(ended_warnings.empty()) << ended_warnings.front();

  // Cut inside a chunk: the truncation warning alone (it already says the process did not
  // finish writing).
  const std::string bytes = ReadAll(dir.Path("no_end.pb"));
  WriteAll(dir.Path("cut.pb"), bytes.substr(0, bytes.size() - 50));
  std::vector<std::string> cut_warnings;
  ASSERT_TRUE(LoadTraceFile(dir.Path("cut.pb"), &cut_warnings).has_value());
  ASSERT_EQ(cut_warnings.size(), 1u);
  EXPECT_NE(cut_warnings[0].find("ends inside a chunk"), std::string::npos);
}

TEST(TraceLoaderTest, SeveralFilesLoadInOrder) {
  TempDir dir;
  Nrm2Scenario().Write(dir.Path("a.pb"));
  HostOnlyScenario().Write(dir.Path("b.pb"));
  std::vector<std::string> warnings;
  auto loaded = LoadTraces({dir.Path("a.pb"), dir.Path("b.pb")}, &warnings);
  ASSERT_TRUE(loaded.has_value());
  ASSERT_EQ(loaded->size(), 2u);
  EXPECT_EQ((*loaded)[0].header.pid, 4242u);
  EXPECT_EQ((*loaded)[1].header.pid, 8181u);
  auto one_bad = LoadTraces({dir.Path("a.pb"), dir.Path("missing.pb")}, &warnings);
  EXPECT_FALSE(one_bad.has_value());
}

}  // namespace
}  // namespace libprof::analysis::testing
