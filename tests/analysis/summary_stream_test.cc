// Proves the streamed summary's parts: the unions give the exact answer when records arrive
// nearly in order and say so when they do not (nesting and the call join: tests/proto/); the
// --nvtx selection answers alike whatever the order of the questions; and
// SummarizeFiles on traces cut into many small chunks (with tiny bounds, so that everything settles early and files are
// read again) prints what loading, filtering with ApplyFilters and summarising in memory prints.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "tests/analysis/scenarios.h"
#include "analysis/model/nvtx_selection.h"
#include "analysis/metrics/process_summarizer.h"
#include "analysis/metrics/streaming_union.h"
#include "analysis/metrics/summary.h"
#include "analysis/reports/summary_report.h"

namespace libprof::analysis::testing {
namespace {

std::vector<Interval> RandomIntervals(std::mt19937_64* rng, size_t n) {
  std::vector<Interval> list;
  uint64_t t = 1000;
  for (size_t i = 0; i < n; ++i) {
    t += (*rng)() % 50;
    list.push_back({t, t + (*rng)() % 80});  // some empty, many overlapping or touching
  }
  return list;
}

TEST(StreamingUnionTest, NearlySortedInputSettlesToTheExactUnion) {
  std::mt19937_64 rng(7);
  std::vector<Interval> list = RandomIntervals(&rng, 20000);
  // Swap neighbours: a little disorder, well within what 64 held pieces absorb.
  for (size_t i = 0; i + 1 < list.size(); i += 3) std::swap(list[i], list[i + 1]);
  std::vector<Interval> sink;
  StreamingUnion u(64, /*horizon_ns=*/0, &sink);
  for (const Interval& i : list) u.Add(i.start_ns, i.end_ns);
  u.Finish();
  EXPECT_FALSE(u.out_of_order());
  EXPECT_EQ(u.length(), UnionLength(list));
  EXPECT_EQ(sink, MergeIntervals(list));
}

TEST(StreamingUnionTest, AnIntervalBeforeWhatWasSettledIsReported) {
  std::mt19937_64 rng(8);
  const std::vector<Interval> list = RandomIntervals(&rng, 10000);
  StreamingUnion u(16, 0);
  for (const Interval& i : list) u.Add(i.start_ns, i.end_ns);
  u.Add(list.front().start_ns, list.front().start_ns + 5);  // long after it was settled
  u.Finish();
  EXPECT_TRUE(u.out_of_order());
}

TEST(StreamingUnionTest, NothingWithinTheHorizonOfTheLatestEndIsSettled) {
  // As libprof delivers them: one thread's buffer for a stretch of time, then another thread's
  // buffer for the same stretch, one flush later.
  std::mt19937_64 rng(10);
  std::vector<Interval> a = RandomIntervals(&rng, 3000), b = RandomIntervals(&rng, 3000);
  StreamingUnion u(16, /*horizon_ns=*/200'000);  // more than either stretch lasts
  for (const Interval& i : a) u.Add(i.start_ns, i.end_ns);
  for (const Interval& i : b) u.Add(i.start_ns, i.end_ns);
  u.Finish();
  EXPECT_FALSE(u.out_of_order());
  std::vector<Interval> all = a;
  all.insert(all.end(), b.begin(), b.end());
  EXPECT_EQ(u.length(), UnionLength(all));
}

TEST(StreamingUnionTest, UnboundedIsExactForAnyOrderAndClipsToWindows) {
  std::mt19937_64 rng(9);
  std::vector<Interval> list = RandomIntervals(&rng, 5000);
  std::shuffle(list.begin(), list.end(), rng);
  const std::vector<Interval> windows = {{2000, 9000}, {20000, 60000}};
  StreamingUnion u(0, 0);
  for (const Interval& i : list) u.AddClipped(i.start_ns, i.end_ns, windows);
  u.Finish();
  EXPECT_FALSE(u.out_of_order());
  EXPECT_EQ(u.length(), UnionLength(Intersect(MergeIntervals(list), windows)));
}

// --- SummarizeFiles against the in-memory path -------------------------------------------------

std::string InMemory(const std::vector<std::string>& paths, const FilterOptions& filters,
                     bool raw) {
  std::vector<std::string> warnings;
  auto loaded = LoadTraces(paths, &warnings);
  if (!loaded) return "error: " + loaded.error();
  auto traces = ApplyFilters(std::move(*loaded), filters);
  if (!traces) return "error: " + traces.error();
  const std::vector<int64_t> offsets = TimeOffsets(*traces);
  std::vector<Summary> parts;
  for (size_t i = 0; i < traces->size(); ++i) {
    parts.push_back(Summarize((*traces)[i], SummaryOptions{.raw = raw}, offsets[i]));
  }
  const Summary total = parts.size() == 1 ? parts.front() : CombineSummaries(parts);
  return SummaryJson(parts, total);
}

std::string Streamed(const std::vector<std::string>& paths, const FilterOptions& filters, bool raw,
                     const StreamLimits& limits) {
  std::vector<std::string> warnings;
  auto report = SummarizeFiles(paths, filters, SummaryOptions{.raw = raw}, &warnings, &limits);
  if (!report) return "error: " + report.error();
  return SummaryJson(report->parts, report->total);
}

TEST(NvtxSelectionTest, AnswersAlikeInAnyOrderOfQuestions) {
  // Inside remembers where the last question fell: questions in time order, backwards and
  // jumping around, on two threads in turn, must get the answers of a search from scratch.
  NvtxSelection selection;
  const std::vector<std::pair<uint64_t, uint64_t>> ranges = {
      {100, 200}, {150, 160}, {300, 400}, {300, 350}, {500, 900}, {600, 700}};
  for (const auto& [start, end] : ranges) selection.Add(1, 1, start, end);
  selection.Add(2, 3, 1000, 2000);  // a start/end range ended on thread 3
  selection.Seal();
  auto expected = [&](uint32_t thread, uint64_t start, uint64_t end) {
    if (thread == 2 || thread == 3) return start >= 1000 && end <= 2000;
    if (thread != 1) return false;
    for (const auto& [s, e] : ranges) {
      if (s <= start && end <= e) return true;
    }
    return false;
  };
  std::vector<uint64_t> times;
  for (uint64_t t = 0; t <= 2100; t += 25) times.push_back(t);
  std::vector<uint64_t> order = times;
  std::vector<uint64_t> backwards(times.rbegin(), times.rend());
  std::vector<uint64_t> jumping;
  for (size_t i = 0; i < times.size(); ++i) jumping.push_back(times[(i * 37) % times.size()]);
  for (const auto* questions : {&order, &backwards, &jumping}) {
    for (uint64_t t : *questions) {
      for (uint32_t thread : {1u, 2u, 3u, 4u}) {
        for (uint64_t length : {0u, 10u, 60u}) {
          EXPECT_EQ(selection.Inside(thread, t, t + length), expected(thread, t, t + length))
              << "thread " << thread << " [" << t << ", " << t + length << "]";
        }
      }
    }
  }
}

TEST(SummarizeFilesTest, MatchesLoadingFilteringAndSummarisingInMemory) {
  TempDir dir;
  // 256-byte chunks: every list of every scenario spreads over many chunks, kinds apart.
  Nrm2Scenario().Write(dir.Path("nrm2.pb"), 256);
  StreamsScenario().Write(dir.Path("streams.pb"), 256);
  ThreadsScenario().Write(dir.Path("threads.pb"), 256);
  IdleScenario().Write(dir.Path("idle.pb"), 256);
  HostOnlyScenario().Write(dir.Path("hostonly.pb"), 256);
  TraceBuilder other = Nrm2Scenario();
  other.header().pid = 4343;
  other.header().hostname = "otherhost";
  other.header().wall_clock_offset_ns = 2'000'000;
  other.Write(dir.Path("other.pb"), 256);
  // Recording start after the first record: --from/--to's first guess of the origin is wrong.
  TraceBuilder late = ThreadsScenario();
  late.header().start_time_ns = Us(20);
  late.Write(dir.Path("late.pb"), 256);

  auto window = [](uint64_t from, uint64_t to) {
    FilterOptions f;
    f.from_ns = from;
    f.to_ns = to;
    return f;
  };
  auto tids = [](std::vector<uint32_t> t) {
    FilterOptions f;
    f.tids = std::move(t);
    return f;
  };
  auto nvtx = [](std::vector<std::string> n) {
    FilterOptions f;
    f.nvtx = std::move(n);
    return f;
  };
  FilterOptions nvtx_and_tid = nvtx({"step"});
  nvtx_and_tid.tids = {101, 102};
  FilterOptions pid;
  pid.pids = {4343};
  struct Case {
    std::vector<std::string> files;
    FilterOptions filters;
    bool raw = false;
  };
  const std::vector<Case> cases = {
      {{"nrm2.pb"}, {}},
      {{"nrm2.pb"}, {}, true},
      {{"nrm2.pb"}, window(59'000, 89'000)},
      {{"streams.pb"}, {}},
      {{"streams.pb"}, window(4'000'000, 12'000'000)},
      {{"streams.pb"}, tids({1})},
      {{"threads.pb"}, {}},
      {{"threads.pb"}, nvtx({"copy"})},
      {{"threads.pb"}, nvtx({"phase", "copy"})},
      {{"threads.pb"}, tids({101})},
      {{"threads.pb"}, nvtx_and_tid},
      {{"threads.pb"}, window(500'000, UINT64_MAX)},
      {{"late.pb"}, window(0, 1'000'000)},
      {{"late.pb"}, {}},
      {{"idle.pb"}, {}},
      {{"hostonly.pb"}, {}},
      {{"nrm2.pb", "hostonly.pb", "threads.pb"}, {}},
      {{"nrm2.pb", "other.pb"}, {}},
      {{"nrm2.pb", "other.pb"}, pid},
      {{"nrm2.pb", "threads.pb"}, nvtx({"step"})},
      {{"threads.pb"}, nvtx({"nope"})},
      {{"threads.pb"}, tids({999})},
  };
  StreamLimits tiny;
  tiny.union_pieces = 2;
  tiny.held_calls_per_thread = 1;
  tiny.op_lag = 1;
  tiny.max_span = 2;
  tiny.horizon_ns = 0;
  for (const Case& c : cases) {
    std::vector<std::string> paths;
    std::string label;
    for (const std::string& f : c.files) {
      paths.push_back(dir.Path(f));
      label += f + " ";
    }
    const std::string expected = InMemory(paths, c.filters, c.raw);
    EXPECT_EQ(Streamed(paths, c.filters, c.raw, StreamLimits{}), expected) << label;
    EXPECT_EQ(Streamed(paths, c.filters, c.raw, tiny), expected) << label << "(tiny bounds)";
  }
}

}  // namespace
}  // namespace libprof::analysis::testing
