// Proves the streamed summary's parts: unions, nesting and the call join give the exact answer
// when records arrive nearly in order and say so when they do not; and SummarizeFiles on traces
// cut into many small chunks (with tiny bounds, so that everything settles early and files are
// read again) prints what loading, filtering with ApplyFilters and summarising in memory prints.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "tests/viewer/scenarios.h"
#include "viewer-cli/correlation_join.h"
#include "viewer-cli/nesting_stream.h"
#include "viewer-cli/process_summarizer.h"
#include "viewer-cli/streaming_union.h"
#include "viewer-cli/summary.h"
#include "viewer-cli/summary_report.h"
#include "viewer-cli/trace_index.h"

namespace libprof::viewer::testing {
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

// Calls of three threads: top-level calls with driver calls inside (some flagged, some not),
// a few zero-length and equal-interval calls.
std::vector<ApiCall> RandomCalls(std::mt19937_64* rng) {
  std::vector<ApiCall> calls;
  for (uint32_t tid = 1; tid <= 3; ++tid) {
    uint64_t t = 1000;
    for (int i = 0; i < 400; ++i) {
      const uint64_t start = t, end = t + 10 + (*rng)() % 90;
      calls.push_back({.start_ns = start, .end_ns = end, .thread_id = tid});
      const int children = static_cast<int>((*rng)() % 3);
      uint64_t c = start;
      for (int k = 0; k < children && c + 4 < end; ++k) {
        const uint64_t c_end = std::min(end, c + 1 + (*rng)() % 10);
        calls.push_back({.domain = ApiDomain::kDriver,
                         .start_ns = c,
                         .end_ns = c_end,
                         .thread_id = tid,
                         .nested = (*rng)() % 2 == 0});
        c = c_end;
      }
      t = end + (*rng)() % 5;  // sometimes touching the next call
    }
  }
  return calls;
}

std::vector<bool> NestedByTraceIndex(const std::vector<ApiCall>& calls) {
  ProcessTrace trace;
  trace.records.api_calls = calls;
  const TraceIndex index(trace);
  std::vector<bool> nested;
  for (size_t i = 0; i < calls.size(); ++i) nested.push_back(index.IsNested(i));
  return nested;
}

TEST(NestingStreamTest, AgreesWithTraceIndexInEndOrderAndInAnyOrderUnbounded) {
  std::mt19937_64 rng(11);
  const std::vector<ApiCall> calls = RandomCalls(&rng);
  const std::vector<bool> expected = NestedByTraceIndex(calls);
  // As CUPTI delivers them: each thread's calls by end time (nested ones before their parent).
  std::vector<size_t> order(calls.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return calls[a].end_ns < calls[b].end_ns; });
  for (size_t max_pending : {size_t{8}, size_t{0}}) {
    std::vector<int> got(calls.size(), -1);
    NestingStream stream(max_pending, /*horizon_ns=*/UINT64_MAX,
                         [&](const ApiCall&, uint64_t seq, bool nested) { got[seq] = nested; });
    for (size_t i : order) stream.Add(calls[i], i);
    stream.Finish();
    EXPECT_FALSE(stream.out_of_order());
    for (size_t i = 0; i < calls.size(); ++i) ASSERT_EQ(got[i], expected[i]) << "call " << i;
  }
  // Shuffled: the bounded stream notices; the unbounded one is still exact.
  std::shuffle(order.begin(), order.end(), rng);
  NestingStream bounded(8, UINT64_MAX, [](const ApiCall&, uint64_t, bool) {});
  for (size_t i : order) bounded.Add(calls[i], i);
  bounded.Finish();
  EXPECT_TRUE(bounded.out_of_order());
  std::vector<int> got(calls.size(), -1);
  NestingStream unbounded(0, 0,
                          [&](const ApiCall&, uint64_t seq, bool nested) { got[seq] = nested; });
  for (size_t i : order) unbounded.Add(calls[i], i);
  unbounded.Finish();
  for (size_t i = 0; i < calls.size(); ++i) ASSERT_EQ(got[i], expected[i]) << "call " << i;
}

TEST(NestingStreamTest, AQuietThreadsCallsAreDecidedOnceOldNotAtTheEnd) {
  // Thread 1 makes two calls at the start, thread 2 thousands after: with a horizon, thread 1's
  // calls are decided as time moves on, so they reach the consumers in time order.
  std::vector<uint64_t> order;
  NestingStream stream(/*max_pending=*/8, /*horizon_ns=*/1000,
                       [&](const ApiCall& c, uint64_t, bool) { order.push_back(c.start_ns); });
  stream.Add({.start_ns = 10, .end_ns = 20, .thread_id = 1}, 0);
  stream.Add({.start_ns = 30, .end_ns = 40, .thread_id = 1}, 1);
  for (uint64_t i = 0; i < 100; ++i) {
    stream.Add({.start_ns = 100 + 50 * i, .end_ns = 120 + 50 * i, .thread_id = 2}, 2 + i);
    stream.ReleaseOld();
  }
  stream.Finish();
  EXPECT_FALSE(stream.out_of_order());
  ASSERT_EQ(order.size(), 102u);
  // Both of thread 1's calls come out long before the end (as soon as 1 µs has passed).
  const size_t second = std::find(order.begin(), order.end(), 30u) - order.begin();
  EXPECT_LT(second, 30u);
}

TEST(CorrelationJoinTest, TheLaunchingCallIsTheFirstUnnestedOneAndLateRecordsAreReported) {
  struct Got {
    LaunchSite site;
    uint64_t device_ns;
    size_t held;
  };
  std::map<uint32_t, Got> got;  // by the thread of the site (one id per thread below)
  CorrelationJoin<int> join(
      /*bounded=*/true,
      [&](const LaunchSite& site, uint64_t ns, const std::vector<const int*>& held) {
        got[site.thread_id] = {site, ns, held.size()};
      },
      /*horizon_ns=*/300, /*op_lag=*/2, /*max_span=*/40);
  // Id 10: a nested driver call arrives (and is decided) before the runtime call around it.
  join.CallSeen(10, 500);
  join.CallDecided(10, 1, 500, /*seq=*/1, /*nested=*/true);
  join.AddDeviceTime(10, 30, 600);
  join.Hold(10, 42, 600);
  join.CallSeen(10, 400);
  join.CallDecided(10, 1, 400, /*seq=*/2, /*nested=*/false);
  // Id 11: only a nested call.
  join.CallSeen(11, 700);
  join.CallDecided(11, 2, 700, 3, true);
  join.AddDeviceTime(11, 5, 720);
  join.AddDeviceTime(20, 1, 800);  // device records moved on, but not the horizon: nothing settles
  join.SettleOld();
  EXPECT_TRUE(got.empty());
  join.AddDeviceTime(21, 1, 1100);  // now 10 and 11 are old enough (20 and 21 are not)
  join.SettleOld();
  EXPECT_EQ(got.size(), 2u);
  ASSERT_EQ(got.count(1), 1u);
  EXPECT_EQ(got[1].site.start_ns, 400u);
  EXPECT_EQ(got[1].device_ns, 30u);
  EXPECT_EQ(got[1].held, 1u);
  EXPECT_EQ(got[2].site.start_ns, 700u);
  EXPECT_FALSE(join.out_of_order());
  join.AddDeviceTime(10, 7, 900);  // too late
  EXPECT_TRUE(join.out_of_order());
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
}  // namespace libprof::viewer::testing
